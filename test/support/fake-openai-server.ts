import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** A tool call the fake model makes; `arguments` is sent verbatim when a string (so it can be malformed JSON). */
export interface FakeToolCall {
  name: string;
  arguments: string | Record<string, unknown>;
  id?: string;
}

/**
 * How a streamed reply fails part-way: the socket is cut, an in-stream error event is
 * sent (as Groq does), or the server stalls: it sends nothing more and keeps the
 * connection open (a local server that hangs), until the client gives up.
 */
interface FakeFailure {
  /** SSE events sent before the failure (the first event is the role chunk). */
  afterEvents: number;
  mode: "disconnect" | "error-event" | "stall";
  /** For `error-event`: the error type, e.g. `internal_server_error` (Groq maps it to a status). */
  type?: string;
  message?: string;
}

/** One scripted answer of the fake server, consumed by the next chat-completions request. */
export type FakeReply =
  | {
      kind: "reply";
      text?: string;
      reasoning?: string;
      toolCalls?: FakeToolCall[];
      /** The `model` field of the response; defaults to the model the request asked for. */
      model?: string;
      /** Waits this long before answering (to test timeouts). */
      delayMs?: number;
      /** Streamed replies: waits this long before each event after the first (a model that drips slowly). */
      eventDelayMs?: number;
      fail?: FakeFailure;
      /** Dollars reported in `usage.cost`, as OpenRouter does with usage accounting on. */
      cost?: number;
      /** The `finish_reason` sent (default `tool_calls` with calls, else `stop`); `length` for a reply cut by the output-token limit. */
      finishReason?: string;
    }
  | { kind: "status"; status: number; body: unknown }
  | { kind: "hang" };

/** A request the fake server received, kept so tests can assert what the model was sent. */
interface FakeRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or null when it was not JSON. */
  body: any;
  /** The body exactly as received. */
  raw: string;
}

/** A running fake OpenAI-compatible server on 127.0.0.1. */
export interface FakeOpenAIServer {
  /** Origin, e.g. `http://127.0.0.1:43121`; any path ending in `/chat/completions` is served. */
  url: string;
  requests: FakeRequest[];
  /**
   * Structured-output requests (a `response_format` asking for JSON, as the intent check sends), kept apart from
   * `requests` and answered from their own queue, so a check after a run consumes none of the run's replies.
   */
  structuredRequests: FakeRequest[];
  enqueue(...replies: FakeReply[]): void;
  /** Queues answers to structured-output requests; with none queued such a request gets HTTP 400 (no fallback is tried). */
  enqueueStructured(...replies: FakeReply[]): void;
  /** Replies queued but not consumed yet. */
  pending(): number;
  /** Drops the replies not consumed yet and the requests recorded (one server serves several scripted runs in turn). */
  clear(): void;
  stop(): Promise<void>;
}

/** A reply with text only. */
export function textReply(text: string): FakeReply {
  return { kind: "reply", text };
}

/** A reply that calls tools, optionally after some text. */
export function toolCallReply(calls: FakeToolCall[], text?: string): FakeReply {
  return { kind: "reply", toolCalls: calls, text };
}

/** An HTTP error in the provider's JSON error shape (`{"error":{"message","type"}}`). */
export function errorReply(status: number, message: string, type = "api_error"): FakeReply {
  return { kind: "status", status, body: { error: { message, type, code: type } } };
}

/** A request that is never answered (until the client gives up or the server stops). */
export function hangReply(): FakeReply {
  return { kind: "hang" };
}

const TEXT_CHUNK_CHARS = 12;

/** Starts the server on a random port of 127.0.0.1. */
export async function startFakeOpenAIServer(): Promise<FakeOpenAIServer> {
  const queue: FakeReply[] = [];
  const requests: FakeRequest[] = [];
  const structuredQueue: FakeReply[] = [];
  const structuredRequests: FakeRequest[] = [];
  const sockets = new Set<Socket>();
  let counter = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `fake server crashed: ${String(error)}`, type: "server_error" } }));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: any = null;
    try {
      body = JSON.parse(raw);
    } catch {
      body = null;
    }
    const path = req.url ?? "/";
    if (req.method === "GET" && path.split("?")[0]!.endsWith("/models")) {
      // The model list, as `pencil doctor` asks for it; not recorded as a model request.
      return sendJson(res, 200, { object: "list", data: [{ id: "openai/gpt-oss-120b", object: "model" }] });
    }
    if (body?.response_format && typeof body.response_format === "object") {
      structuredRequests.push({ method: req.method ?? "", path, headers: { ...req.headers }, body, raw });
      const answer = structuredQueue.shift();
      if (!answer)
        return sendJson(res, 400, {
          error: { message: "fake server: no structured answer queued", type: "invalid_request_error" },
        });
      return answerWith(answer, body, res);
    }
    requests.push({ method: req.method ?? "", path, headers: { ...req.headers }, body, raw });
    if (req.method !== "POST" || !path.split("?")[0]!.endsWith("/chat/completions")) {
      return sendJson(res, 404, {
        error: {
          message: `fake server serves POST .../chat/completions, not ${req.method} ${path}`,
          type: "not_found",
        },
      });
    }
    const reply = queue.shift();
    if (!reply) {
      return sendJson(res, 500, {
        error: { message: "fake server: no reply queued for this request", type: "server_error" },
      });
    }
    return answerWith(reply, body, res);
  }

  async function answerWith(reply: FakeReply, body: any, res: ServerResponse): Promise<void> {
    if (reply.kind === "status") return sendJson(res, reply.status, reply.body);
    if (reply.kind === "hang") return; // the socket stays open until the client aborts or stop() runs
    if (reply.delayMs) await Bun.sleep(reply.delayMs);
    counter += 1;
    const id = `chatcmpl-fake-${counter}`;
    const model = reply.model ?? (typeof body?.model === "string" ? body.model : "fake-model");
    if (body?.stream === true) return streamReply(res, reply, id, model);
    return sendJson(res, 200, completion(reply, id, model));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    structuredRequests,
    enqueue: (...replies) => void queue.push(...replies),
    enqueueStructured: (...replies) => void structuredQueue.push(...replies),
    pending: () => queue.length,
    clear: () => {
      queue.length = 0;
      requests.length = 0;
      structuredQueue.length = 0;
      structuredRequests.length = 0;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

function argumentsText(call: FakeToolCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

function usageOf(reply: Extract<FakeReply, { kind: "reply" }>) {
  const completion = Math.ceil(
    ((reply.text ?? "").length + (reply.toolCalls ?? []).map(argumentsText).join("").length) / 4,
  );
  return {
    prompt_tokens: 42,
    completion_tokens: completion,
    total_tokens: 42 + completion,
    ...(reply.cost !== undefined ? { cost: reply.cost } : {}),
  };
}

function completion(reply: Extract<FakeReply, { kind: "reply" }>, id: string, model: string) {
  const calls = reply.toolCalls ?? [];
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.text ?? null,
          ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((c, i) => ({
                  id: c.id ?? `call_${id}_${i}`,
                  type: "function",
                  function: { name: c.name, arguments: argumentsText(c) },
                })),
              }
            : {}),
        },
        finish_reason: reply.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop"),
      },
    ],
    usage: usageOf(reply),
  };
}

/** The SSE events of a streamed reply, in order, without the final `[DONE]`. */
function streamEvents(reply: Extract<FakeReply, { kind: "reply" }>, id: string, model: string): unknown[] {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: unknown, finish: string | null = null, extra: object = {}) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
  const events: unknown[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of split(reply.reasoning ?? "")) events.push(chunk({ reasoning: piece }));
  for (const piece of split(reply.text ?? "")) events.push(chunk({ content: piece }));
  const calls = reply.toolCalls ?? [];
  calls.forEach((call, index) => {
    const args = argumentsText(call);
    const half = Math.ceil(args.length / 2);
    events.push(
      chunk({
        tool_calls: [
          {
            index,
            id: call.id ?? `call_${id}_${index}`,
            type: "function",
            function: { name: call.name, arguments: "" },
          },
        ],
      }),
    );
    events.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }));
    events.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
  });
  const usage = usageOf(reply);
  // Groq reports usage in x_groq on the last choice chunk; OpenAI and OpenRouter in a final chunk without choices.
  events.push(chunk({}, reply.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop"), { x_groq: { id, usage } }));
  events.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
  return events;
}

function split(text: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += TEXT_CHUNK_CHARS) pieces.push(text.slice(i, i + TEXT_CHUNK_CHARS));
  return pieces;
}

async function streamReply(
  res: ServerResponse,
  reply: Extract<FakeReply, { kind: "reply" }>,
  id: string,
  model: string,
): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const events = streamEvents(reply, id, model);
  const fail = reply.fail;
  for (let i = 0; i < events.length; i++) {
    if (i > 0 && reply.eventDelayMs) {
      await Bun.sleep(reply.eventDelayMs);
      if (res.destroyed) return;
    }
    if (fail && i === fail.afterEvents) {
      if (fail.mode === "stall") return; // headers and the first events sent; the socket stays open until the client aborts
      if (fail.mode === "disconnect") {
        // Let the written events reach the client, then cut the connection without ending the chunked body.
        await Bun.sleep(5);
        res.socket?.destroy();
        return;
      }
      res.write(
        `data: ${JSON.stringify({ error: { message: fail.message ?? "stream failed", type: fail.type ?? "internal_server_error" } })}\n\n`,
      );
      res.end();
      return;
    }
    res.write(`data: ${JSON.stringify(events[i])}\n\n`);
  }
  res.write("data: [DONE]\n\n");
  res.end();
}
