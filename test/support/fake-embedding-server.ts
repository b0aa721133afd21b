import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** A request the embedding server received: which protocol, which model, which texts. */
interface EmbedRequest {
  protocol: "openai" | "gemini";
  model: string;
  inputs: string[];
  /** Gemini's outputDimensionality or OpenAI's dimensions, when sent. */
  dimensions?: number;
  taskType?: string;
  authorization?: string;
}

/** A running fake embedding service on 127.0.0.1: OpenAI's `/embeddings` and Gemini's `:embedContent` / `:batchEmbedContents`. */
export interface FakeEmbeddingServer {
  url: string;
  requests: EmbedRequest[];
  /** Makes the next `n` requests fail with this HTTP status (as a provider that is down does). */
  failNext(n: number, status?: number): void;
  stop(): Promise<void>;
}

const STOP = new Set([
  "the",
  "a",
  "an",
  "is",
  "was",
  "what",
  "of",
  "for",
  "to",
  "and",
  "on",
  "in",
  "my",
  "at",
  "it",
  "are",
  "be",
  "with",
]);

/**
 * Deterministic "semantic" vectors: every word (lower case, stop words dropped)
 * adds weight to a dimension chosen by its hash, and the model name seeds the
 * hash, so two models give unrelated vectors for the same text — as real models do.
 */
export function fakeVector(text: string, model: string, dims: number): number[] {
  const v: number[] = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (STOP.has(word)) continue;
    let h = 2166136261;
    for (const ch of `${model}/${word}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
    v[h % dims]! += 1;
  }
  if (!v.some((x) => x !== 0)) v[0] = 0.001;
  return v;
}

/** Starts the server; `dims` is the width of vectors when the request names none (e.g. 768 like nomic-embed-text). */
export async function startFakeEmbeddingServer(dims = 768): Promise<FakeEmbeddingServer> {
  const requests: EmbedRequest[] = [];
  const sockets = new Set<Socket>();
  let failures: { left: number; status: number } = { left: 0, status: 503 };
  const server = createServer(
    (req, res) => void handle(req, res).catch((error) => send(res, 500, { error: { message: String(error) } })),
  );
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
    const path = (req.url ?? "").split("?")[0]!;
    const body = raw ? JSON.parse(raw) : {};
    if (failures.left > 0) {
      failures.left -= 1;
      return send(res, failures.status, {
        error: { code: failures.status, message: "the embedding service is unavailable", status: "UNAVAILABLE" },
      });
    }
    const gemini = /\/models\/([^/:]+):(embedContent|batchEmbedContents)$/.exec(path);
    if (req.method === "POST" && gemini) {
      const model = gemini[1]!;
      const items: any[] = gemini[2] === "embedContent" ? [body] : body.requests;
      const inputs = items.map((r) => (r.content.parts as { text: string }[]).map((p) => p.text).join(""));
      const width = items[0]?.outputDimensionality ?? 3072;
      requests.push({
        protocol: "gemini",
        model,
        inputs,
        dimensions: width,
        taskType: items[0]?.taskType,
        authorization: String(req.headers["x-goog-api-key"] ?? ""),
      });
      const vectors = inputs.map((t) => fakeVector(t, model, width));
      return send(
        res,
        200,
        gemini[2] === "embedContent"
          ? { embedding: { values: vectors[0] } }
          : { embeddings: vectors.map((values) => ({ values })) },
      );
    }
    if (req.method === "POST" && path.endsWith("/embeddings")) {
      const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
      const width = body.dimensions ?? dims;
      requests.push({
        protocol: "openai",
        model: body.model,
        inputs,
        ...(body.dimensions ? { dimensions: body.dimensions } : {}),
        authorization: String(req.headers.authorization ?? ""),
      });
      return send(res, 200, {
        object: "list",
        model: body.model,
        data: inputs.map((t, index) => ({ object: "embedding", index, embedding: fakeVector(t, body.model, width) })),
        usage: { prompt_tokens: 10, total_tokens: 10 },
      });
    }
    // A chat request to an embedding-only server: as a server without the model answers.
    return send(res, 404, {
      error: { message: `fake embedding server: no route for ${req.method} ${path}`, type: "not_found" },
    });
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    failNext: (n, status = 503) => void (failures = { left: n, status }),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}
