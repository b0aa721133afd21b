// Unit tests of FallbackModel's hold-back and commit edges, on the AI SDK's mock model and
// simulated streams (the HTTP behaviour, through the real provider clients, is in models.test.ts).
import { describe, expect, test } from "bun:test";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { ModelCallError } from "../../core/errors/model-call-error.ts";
import { FallbackModel, type FallbackEvent } from "../../ai/fallback-model.ts";
import { modelLabelOf } from "../../ai/model-label.ts";

type Part = LanguageModelV4StreamPart;

const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};
const start: Part = { type: "stream-start", warnings: [] };
const text = (id: string, delta: string): Part[] => [
  { type: "text-start", id },
  { type: "text-delta", id, delta },
  { type: "text-end", id },
];
const finish = (unified: "stop" | "error" = "stop"): Part => ({
  type: "finish",
  finishReason: { unified, raw: unified },
  usage,
});
const httpError = (status: number, message: string) => Object.assign(new Error(message), { statusCode: status });

/** A mock model that streams `parts` (simulated, no delay); `calls` counts its requests. */
function streaming(parts: Part[]) {
  return new MockLanguageModelV4({
    doStream: async () => ({
      stream: simulateReadableStream({ chunks: parts, initialDelayInMs: null, chunkDelayInMs: null }),
    }),
  });
}

/** A chain of mock models, with what it reported. */
function chain(...models: MockLanguageModelV4[]) {
  const used: string[] = [];
  const fallbacks: FallbackEvent[] = [];
  const model = new FallbackModel(
    models.map((m, i) => ({ label: `mock:m${i + 1}`, model: m })),
    { onModelUsed: (label) => used.push(label), onFallback: (e) => fallbacks.push(e), cooldownMs: 0 },
  );
  return { model, used, fallbacks };
}

async function readAll(model: FallbackModel): Promise<Part[]> {
  const { stream } = await model.doStream({ prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] });
  const parts: Part[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return parts;
    parts.push(value);
  }
}

const deltas = (parts: Part[]) => parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : []));
const errors = (parts: Part[]) => parts.flatMap((p) => (p.type === "error" ? [p.error] : []));

describe("FallbackModel holds a step back while a fallback remains", () => {
  test("a stream that breaks after text: none of its text is passed on, the fallback's whole step is", async () => {
    const first = streaming([
      start,
      ...text("t1", "half an ans"),
      { type: "error", error: httpError(503, "overloaded") },
    ]);
    const second = streaming([start, ...text("t1", "the whole answer"), finish()]);
    const { model, used, fallbacks } = chain(first, second);
    const parts = await readAll(model);
    expect(deltas(parts)).toEqual(["the whole answer"]);
    expect(errors(parts)).toEqual([]);
    expect(used).toEqual(["mock:m2"]);
    expect(fallbacks).toEqual([{ from: "mock:m1", to: "mock:m2", reason: "HTTP 503: overloaded" }]);
    const last = parts.at(-1);
    expect(last?.type).toBe("finish");
    expect(modelLabelOf(last?.type === "finish" ? last.providerMetadata : undefined)).toBe("mock:m2");
  });

  test("a stream that ends without a finish is not a step: the fallback answers", async () => {
    const first = streaming([start, ...text("t1", "cut")]);
    const second = streaming([start, ...text("t1", "done"), finish()]);
    const { model, fallbacks } = chain(first, second);
    expect(deltas(await readAll(model))).toEqual(["done"]);
    expect(fallbacks[0]?.reason).toContain("ended its stream without finishing the step");
  });

  test("a finish with reason error before the commit falls back too", async () => {
    const first = streaming([start, ...text("t1", "bad"), finish("error")]);
    const second = streaming([start, ...text("t1", "good"), finish()]);
    const { model, used } = chain(first, second);
    expect(deltas(await readAll(model))).toEqual(["good"]);
    expect(used).toEqual(["mock:m2"]);
  });

  test("a tool call is held back with the rest: a step that breaks after one never shows it", async () => {
    const call: Part = { type: "tool-call", toolCallId: "c1", toolName: "read_file", input: '{"path":"a"}' };
    const first = streaming([start, call, { type: "error", error: httpError(500, "boom") }]);
    const second = streaming([start, { ...call, toolCallId: "c2" } as Part, finish()]);
    const parts = await readAll(chain(first, second).model);
    expect(parts.flatMap((p) => (p.type === "tool-call" ? [p.toolCallId] : []))).toEqual(["c2"]);
  });

  test("a refusal (HTTP 400) is not sent to the fallback: its parts and one ModelCallError are passed on", async () => {
    const first = streaming([start, ...text("t1", "so far"), { type: "error", error: httpError(400, "bad request") }]);
    const second = streaming([start, ...text("t1", "never"), finish()]);
    const { model, fallbacks } = chain(first, second);
    const parts = await readAll(model);
    expect(second.doStreamCalls).toHaveLength(0);
    expect(fallbacks).toEqual([]);
    expect(deltas(parts)).toEqual(["so far"]);
    const [error] = errors(parts);
    expect(error).toBeInstanceOf(ModelCallError);
    expect((error as ModelCallError).refused).toBe(true);
  });
});

describe("FallbackModel commits on the last model", () => {
  test("with no fallback left, parts are passed on as they come, before the step finishes", async () => {
    let feed!: ReadableStreamDefaultController<Part>;
    const stream = new ReadableStream<Part>({ start: (c) => void (feed = c) });
    const only = new MockLanguageModelV4({ doStream: async () => ({ stream }) });
    const { model, used } = chain(only);
    const { stream: relayed } = await model.doStream({
      prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    });
    const reader = relayed.getReader();
    feed.enqueue(start);
    for (const p of text("t1", "early")) feed.enqueue(p);
    const seen: Part[] = [];
    while (!seen.some((p) => p.type === "text-delta")) seen.push((await reader.read()).value!);
    expect(deltas(seen)).toEqual(["early"]); // read while the model's stream is still open: nothing waited for the finish
    expect(used).toEqual(["mock:m1"]);
    feed.enqueue(finish());
    feed.close();
    await reader.cancel();
  });

  test("after the fallback committed, a later break is an error part; no third model is asked", async () => {
    const first = streaming([start, { type: "error", error: httpError(429, "slow down") }]);
    const second = streaming([start, ...text("t1", "partial"), { type: "error", error: httpError(502, "gateway") }]);
    const { model, used } = chain(first, second);
    const parts = await readAll(model);
    expect(deltas(parts)).toEqual(["partial"]);
    const [error] = errors(parts);
    expect(error).toBeInstanceOf(ModelCallError);
    expect((error as ModelCallError).attempts.map((a) => a.reason)).toEqual([
      "HTTP 429: slow down",
      "HTTP 502: gateway",
    ]);
    expect(used).toEqual(["mock:m2"]);
  });

  test("every model failing to open ends in one ModelCallError naming each", async () => {
    const failing = (status: number) =>
      new MockLanguageModelV4({
        doStream: async () => {
          throw httpError(status, `down ${status}`);
        },
      });
    const { model } = chain(failing(500), failing(503));
    const error = await model.doStream({ prompt: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelCallError);
    expect((error as ModelCallError).message).toContain("mock:m1 (HTTP 500: down 500); mock:m2 (HTTP 503: down 503)");
  });
});

describe("FallbackModel.doGenerate", () => {
  test("a 5xx moves to the next model; the result carries the label of the model that answered", async () => {
    const down = new MockLanguageModelV4({
      doGenerate: async () => {
        throw httpError(500, "down");
      },
    });
    const up = new MockLanguageModelV4({
      doGenerate: {
        content: [{ type: "text", text: "ok" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      },
    });
    const { model, used, fallbacks } = chain(down, up);
    const result = await model.doGenerate({ prompt: [] });
    expect(result.content).toEqual([{ type: "text", text: "ok" }]);
    expect(modelLabelOf(result.providerMetadata)).toBe("mock:m2");
    expect(used).toEqual(["mock:m2"]);
    expect(fallbacks.map((f) => f.reason)).toEqual(["HTTP 500: down"]);
  });
});
