/*
 * A fake `/audio/transcriptions` endpoint on 127.0.0.1, speaking the protocol of
 * Groq's (flavour "groq": answers carry `x_groq.id`) or any OpenAI-compatible
 * server ("openai"): multipart form in, JSON out, errors as `{ error: { message, type } }`.
 */

/** One scripted answer, consumed by the next request; with none queued the server answers `defaultText`. */
type FakeTranscription = { text: string; delayMs?: number; duration?: number } | { status: number; message: string };

/** A transcription request as received. */
interface TranscriptionRequest {
  path: string;
  model: string;
  authorization: string | null;
  fileName: string;
  bytes: Uint8Array;
}

/** A running fake transcription server. */
export interface FakeTranscriptionServer {
  /** Base URL to give the client (ends in `/v1`). */
  baseURL: string;
  requests: TranscriptionRequest[];
  enqueue(...answers: FakeTranscription[]): void;
  stop(): Promise<void>;
}

/** Starts the server; unscripted requests are answered with `defaultText`. */
export function startFakeTranscriptionServer(
  flavour: "groq" | "openai" = "groq",
  defaultText = "add a hello function",
): FakeTranscriptionServer {
  const requests: TranscriptionRequest[] = [];
  const queue: FakeTranscription[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST" || !url.pathname.endsWith("/audio/transcriptions"))
        return error(404, "Unknown request URL", "invalid_request_error");
      if (!(req.headers.get("content-type") ?? "").includes("multipart/form-data"))
        return error(400, "request must be multipart/form-data", "invalid_request_error");
      const form = await req.formData();
      const file = form.get("file");
      const model = form.get("model");
      if (typeof model !== "string" || !model) return error(400, "model is required", "invalid_request_error");
      if (!file || typeof file === "string") return error(400, "file or url must be provided", "invalid_request_error");
      const bytes = new Uint8Array(await (file as File).arrayBuffer());
      requests.push({
        path: url.pathname,
        model,
        authorization: req.headers.get("authorization"),
        fileName: (file as File).name,
        bytes,
      });
      const answer = queue.shift() ?? { text: defaultText };
      if ("status" in answer)
        return error(
          answer.status,
          answer.message,
          answer.status >= 500 ? "internal_server_error" : "invalid_request_error",
        );
      if (answer.delayMs) await Bun.sleep(answer.delayMs);
      const body = {
        text: answer.text,
        task: "transcribe",
        language: "english",
        duration: answer.duration ?? 3.2,
        ...(flavour === "groq" ? { x_groq: { id: `req_${requests.length}` } } : {}),
      };
      return Response.json(body);
    },
  });
  return {
    baseURL: `http://127.0.0.1:${server.port}/v1`,
    requests,
    enqueue: (...answers) => void queue.push(...answers),
    async stop() {
      server.stop(true);
    },
  };
}

function error(status: number, message: string, type: string): Response {
  return Response.json({ error: { message, type } }, { status });
}
