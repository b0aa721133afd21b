import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";
import { ModelCallError } from "../../core/errors/model-call-error.ts";
import { UsageFailure } from "../../core/errors/usage-failure.ts";
import { modelLabelOf } from "../../ai/model-label.ts";
import { DEFAULT_GROQ_MODEL, DEFAULT_OPENROUTER_MODEL } from "../../ai/model-specs.ts";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { FallbackModel, type FallbackOptions } from "../../ai/fallback-model.ts";
import { createModel, resolveModels, type ResolveModelsOptions } from "../../ai/resolve-models.ts";
import type { ModelSpec, ProviderName } from "../../ai/model-specs.ts";
import {
  errorReply,
  hangReply,
  startFakeOpenAIServer,
  textReply,
  toolCallReply,
  type FakeOpenAIServer,
} from "../support/fake-openai-server.ts";

const GROQ = `groq:${DEFAULT_GROQ_MODEL}`;
const OPENROUTER = `openrouter:${DEFAULT_OPENROUTER_MODEL}`;

let groq: FakeOpenAIServer;
let openrouter: FakeOpenAIServer;

beforeAll(async () => {
  groq = await startFakeOpenAIServer();
  openrouter = await startFakeOpenAIServer();
});
afterAll(async () => {
  await groq.stop();
  await openrouter.stop();
});
afterEach(() => {
  // Every scripted reply must have been used; then start the next test clean.
  expect(groq.pending()).toBe(0);
  expect(openrouter.pending()).toBe(0);
  groq.requests.length = 0;
  openrouter.requests.length = 0;
});

function cloudEnv(): Record<string, string> {
  return {
    GROQ_API_KEY: "groq-test-key",
    GROQ_BASE_URL: `${groq.url}/openai/v1`,
    OPENROUTER_API_KEY: "openrouter-test-key",
    OPENROUTER_BASE_URL: `${openrouter.url}/api/v1`,
  };
}

/** Runs the real tool loop with one `lookup` tool; collects what a session would look at. */
async function runLoop(env: Record<string, string>, options: ResolveModelsOptions = {}) {
  return runModel((watch) => resolveModels(env, { cooldownMs: 0, ...options, ...watch }).model);
}

/** Runs the real tool loop on the model `make` builds with the given observers. */
async function runModel(make: (watch: FallbackOptions) => LanguageModelV4) {
  const used: string[] = [];
  const fallbacks: string[] = [];
  const toolInputs: string[] = [];
  const model = make({
    onModelUsed: (label) => used.push(label),
    onFallback: (e) => fallbacks.push(`${e.from} -> ${e.to}: ${e.reason}`),
  });
  const tools = {
    lookup: tool({
      description: "Looks a word up.",
      inputSchema: z.object({ word: z.string() }),
      execute: async ({ word }) => {
        toolInputs.push(word);
        return `definition of ${word}`;
      },
    }),
  };
  const errors: unknown[] = [];
  const toolCalls: unknown[] = [];
  const result = streamText({ model, tools, prompt: "Define pencil.", stopWhen: stepCountIs(5), onError: () => {} });
  for await (const part of result.fullStream) {
    if (part.type === "error") errors.push(part.error);
    if (part.type === "tool-call") toolCalls.push(part.input);
  }
  // When the first call already failed there is no step, and `steps` rejects.
  const steps = errors.length > 0 ? await Promise.resolve(result.steps).catch(() => []) : await result.steps;
  return {
    used,
    fallbacks,
    toolInputs,
    toolCalls,
    errors,
    steps,
    labels: steps.map((s) => modelLabelOf(s.providerMetadata)),
  };
}

const lookupCall = (word: string) => toolCallReply([{ name: "lookup", arguments: { word } }]);

/** A model spec of `provider`'s own client, pointed at a fake server. */
function specOn(provider: ProviderName, origin: string): ModelSpec {
  const baseURL =
    provider === "groq" ? `${origin}/openai/v1` : provider === "openrouter" ? `${origin}/api/v1` : `${origin}/v1`;
  return { provider, modelId: "test-model", baseURL, apiKey: `${provider}-key`, label: `${provider}:test-model` };
}

describe("resolveModels through streamText with the real clients", () => {
  test("a normal run: Groq answers every step, at the exact base URL, with its key", async () => {
    groq.enqueue(lookupCall("pencil"), textReply("A pencil writes."));
    const run = await runLoop(cloudEnv());
    expect(run.errors).toEqual([]);
    expect(run.toolInputs).toEqual(["pencil"]);
    expect(run.steps.map((s) => s.text)).toEqual(["", "A pencil writes."]);
    expect(run.labels).toEqual([GROQ, GROQ]);
    expect(run.used).toEqual([GROQ, GROQ]);
    expect(groq.requests.map((r) => r.path)).toEqual(["/openai/v1/chat/completions", "/openai/v1/chat/completions"]);
    expect(groq.requests[0]!.headers.authorization).toBe("Bearer groq-test-key");
    expect(groq.requests[0]!.body.model).toBe(DEFAULT_GROQ_MODEL);
    // The second request carries the tool result back to the model.
    const messages = groq.requests[1]!.body.messages as { role: string; content: unknown }[];
    expect(messages.at(-1)).toMatchObject({ role: "tool", content: "definition of pencil" });
    expect(openrouter.requests).toEqual([]);
  });

  test("Groq 429: OpenRouter answers and the step is labelled openrouter", async () => {
    groq.enqueue(errorReply(429, "Rate limit reached", "rate_limit_error"), textReply("Groq is back."));
    openrouter.enqueue(lookupCall("pencil"));
    const run = await runLoop(cloudEnv());
    expect(run.errors).toEqual([]);
    expect(run.labels).toEqual([OPENROUTER, GROQ]);
    expect(run.used).toEqual([OPENROUTER, GROQ]);
    expect(run.fallbacks).toEqual([`${GROQ} -> ${OPENROUTER}: HTTP 429: Rate limit reached`]);
    expect(openrouter.requests[0]!.path).toBe("/api/v1/chat/completions");
    expect(openrouter.requests[0]!.headers.authorization).toBe("Bearer openrouter-test-key");
    expect(openrouter.requests[0]!.body.model).toBe(DEFAULT_OPENROUTER_MODEL);
  });

  test("after a failure the primary cools down: the next step goes straight to the fallback", async () => {
    groq.enqueue(errorReply(503, "Service unavailable"));
    openrouter.enqueue(lookupCall("pencil"), textReply("Done."));
    const run = await runLoop(cloudEnv(), { cooldownMs: 60_000 });
    expect(run.labels).toEqual([OPENROUTER, OPENROUTER]);
    expect(groq.requests).toHaveLength(1);
  });

  test("Groq 500 mid-stream before any tool call: the step is issued again, whole, to OpenRouter", async () => {
    groq.enqueue({
      kind: "reply",
      text: "Let me look that word up for you.",
      toolCalls: [{ name: "lookup", arguments: { word: "from-groq" } }],
      fail: { afterEvents: 2, mode: "error-event", type: "internal_server_error", message: "Internal server error" },
    });
    openrouter.enqueue(
      toolCallReply([{ name: "lookup", arguments: { word: "pencil" } }], "Looking it up."),
      textReply("A pencil writes."),
    );
    const run = await runLoop(cloudEnv(), { cooldownMs: 60_000 });
    expect(run.errors).toEqual([]);
    expect(run.fallbacks).toEqual([`${GROQ} -> ${OPENROUTER}: HTTP 500: Internal server error`]);
    // Nothing of Groq's broken attempt is left in the step: not its text, not its tool call.
    expect(run.steps[0]!.text).toBe("Looking it up.");
    expect(run.toolCalls).toEqual([{ word: "pencil" }]);
    expect(run.toolInputs).toEqual(["pencil"]);
    expect(run.labels[0]).toBe(OPENROUTER);
    // The same messages and tools went to OpenRouter.
    expect(openrouter.requests[0]!.body.messages).toEqual(groq.requests[0]!.body.messages);
    expect(openrouter.requests[0]!.body.tools).toEqual(groq.requests[0]!.body.tools);
  });

  test("a connection cut mid-stream before any tool call also falls back", async () => {
    groq.enqueue({
      kind: "reply",
      text: "Partial answer that never ends",
      fail: { afterEvents: 2, mode: "disconnect" },
    });
    openrouter.enqueue(textReply("Complete answer."));
    const run = await runLoop(cloudEnv());
    expect(run.errors).toEqual([]);
    expect(run.steps.map((s) => s.text)).toEqual(["Complete answer."]);
    expect(run.labels).toEqual([OPENROUTER]);
    expect(run.fallbacks[0]).toContain("ECONNRESET");
  });

  // Each provider client as primary: OpenRouter's passes a tool call on as soon as its arguments are complete,
  // the others may too; none of the step's tools has run when the stream breaks, so the step goes to the fallback.
  for (const primary of ["groq", "openrouter", "local"] as const) {
    test(`${primary} as primary: a stream cut after one whole tool call falls back, and only the fallback's call runs`, async () => {
      groq.enqueue({
        kind: "reply",
        toolCalls: [
          { name: "lookup", arguments: { word: "first" } },
          { name: "lookup", arguments: { word: "second" } },
        ],
        fail: { afterEvents: 5, mode: "disconnect" },
      });
      openrouter.enqueue(lookupCall("from-fallback"), textReply("Done."));
      const fallback: ProviderName = primary === "openrouter" ? "groq" : "openrouter";
      const chain = [specOn(primary, groq.url), specOn(fallback, openrouter.url)];
      const run = await runModel(
        (watch) =>
          new FallbackModel(
            chain.map((spec) => ({ label: spec.label, model: createModel(spec) })),
            { cooldownMs: 60_000, ...watch },
          ),
      );
      expect(run.errors).toEqual([]);
      expect(run.toolInputs).toEqual(["from-fallback"]);
      expect(run.toolCalls).toEqual([{ word: "from-fallback" }]);
      expect(run.labels).toEqual([chain[1]!.label, chain[1]!.label]);
      expect(run.fallbacks).toHaveLength(1);
      expect(run.fallbacks[0]).toStartWith(`${chain[0]!.label} -> ${chain[1]!.label}`);
      expect(groq.requests).toHaveLength(1);
    });
  }

  test("a 400 is not sent to the fallback: a clear error names the model and the refusal", async () => {
    groq.enqueue(errorReply(400, "messages.1: tool_call_id is invalid", "invalid_request_error"));
    const run = await runLoop(cloudEnv());
    expect(run.errors).toHaveLength(1);
    const error = run.errors[0] as ModelCallError;
    expect(error).toBeInstanceOf(ModelCallError);
    expect(error.refused).toBe(true);
    expect(error.message).toContain(GROQ);
    expect(error.message).toContain("HTTP 400: messages.1: tool_call_id is invalid");
    expect(error.message).toContain("not retried on a fallback");
    expect(openrouter.requests).toEqual([]);
  });

  test("both down: the error names both models and why each failed", async () => {
    groq.enqueue(errorReply(503, "Groq is over capacity"));
    openrouter.enqueue(errorReply(502, "No upstream available"));
    const run = await runLoop(cloudEnv());
    expect(run.errors).toHaveLength(1);
    const error = run.errors[0] as ModelCallError;
    expect(error.refused).toBe(false);
    expect(error.attempts.map((a) => a.model)).toEqual([GROQ, OPENROUTER]);
    expect(error.message).toContain(`${GROQ} (HTTP 503: Groq is over capacity)`);
    expect(error.message).toContain(`${OPENROUTER} (HTTP 502: No upstream available)`);
  });

  test("a primary that does not answer in time is abandoned for the fallback", async () => {
    groq.enqueue(hangReply());
    openrouter.enqueue(textReply("On time."));
    const started = performance.now();
    const run = await runLoop({ ...cloudEnv(), PENCIL_TIMEOUT_FIRST_BYTE_MS: "300" });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(run.steps.map((s) => s.text)).toEqual(["On time."]);
    expect(run.fallbacks[0]).toContain("sent no first byte within 300 ms");
  });

  test("an abort by the caller is not a model failure: nothing is sent to the fallback", async () => {
    groq.enqueue(hangReply());
    const fallbacks: string[] = [];
    const { model } = resolveModels(cloudEnv(), { onFallback: (e) => fallbacks.push(e.to) });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const result = streamText({ model, prompt: "Wait.", abortSignal: controller.signal, onError: () => {} });
    const types: string[] = [];
    for await (const part of result.fullStream) types.push(part.type);
    expect(types).toContain("abort");
    expect(fallbacks).toEqual([]);
    expect(openrouter.requests).toEqual([]);
  });

  test("a primary that refuses the connection is skipped", async () => {
    const closed = await startFakeOpenAIServer();
    await closed.stop();
    openrouter.enqueue(textReply("Reachable."));
    const run = await runLoop({ ...cloudEnv(), GROQ_BASE_URL: `${closed.url}/openai/v1` });
    expect(run.steps.map((s) => s.text)).toEqual(["Reachable."]);
    expect(run.labels).toEqual([OPENROUTER]);
  });

  test("non-streamed calls fall back too, and carry the label", async () => {
    groq.enqueue(errorReply(500, "boom"));
    openrouter.enqueue(textReply("Generated."));
    const { model } = resolveModels(cloudEnv(), { cooldownMs: 0 });
    const result = await generateText({ model, prompt: "Say something." });
    expect(result.text).toBe("Generated.");
    expect(modelLabelOf(result.providerMetadata)).toBe(OPENROUTER);
    expect(openrouter.requests[0]!.body.stream).toBeUndefined();
  });

  test("malformed tool arguments reach the loop as a tool error the model is told about", async () => {
    groq.enqueue(toolCallReply([{ name: "lookup", arguments: '{"word": ' }]), textReply("Sorry."));
    const run = await runLoop(cloudEnv());
    expect(run.toolInputs).toEqual([]);
    const retry = JSON.stringify(groq.requests[1]!.body.messages);
    expect(retry).toContain("lookup");
    expect(retry.toLowerCase()).toContain("invalid");
  });

  test("a local OpenAI-compatible server is used alone, at its exact base URL, without any cloud key", async () => {
    const local = await startFakeOpenAIServer();
    try {
      local.enqueue(lookupCall("pencil"), textReply("Local answer."));
      const env = {
        ...cloudEnv(),
        LOCAL_LLM_BASE_URL: `${local.url}/some/prefix/v1`,
        LOCAL_LLM_MODEL: "qwen2.5-coder:7b",
      };
      const run = await runLoop(env);
      expect(run.labels).toEqual(["local:qwen2.5-coder:7b", "local:qwen2.5-coder:7b"]);
      expect(local.requests.map((r) => r.path)).toEqual([
        "/some/prefix/v1/chat/completions",
        "/some/prefix/v1/chat/completions",
      ]);
      expect(local.requests[0]!.body.model).toBe("qwen2.5-coder:7b");
      expect(local.requests.map((r) => r.raw + JSON.stringify(r.headers)).join("")).not.toContain("test-key");
      expect(groq.requests).toEqual([]);
      expect(openrouter.requests).toEqual([]);
    } finally {
      await local.stop();
    }
  });
});

describe("Pencil's own timeouts against a server that stalls", () => {
  const localEnv = (extra: Record<string, string>) => ({
    LOCAL_LLM_BASE_URL: `${groq.url}/v1`,
    LOCAL_LLM_MODEL: "qwen-local",
    ...extra,
  });

  test("a local server that never sends its first byte fails after PENCIL_TIMEOUT_FIRST_BYTE_MS", async () => {
    groq.enqueue(hangReply());
    const run = await runLoop(localEnv({ PENCIL_TIMEOUT_FIRST_BYTE_MS: "300" }));
    expect(run.errors).toHaveLength(1);
    expect((run.errors[0] as Error).message).toContain(
      "local:qwen-local (local:qwen-local sent no first byte within 300 ms)",
    );
  });

  test("a local server that stalls mid-stream fails after PENCIL_TIMEOUT_IDLE_MS of silence", async () => {
    groq.enqueue({
      kind: "reply",
      text: "I will now think for a very long time about pencils.",
      fail: { afterEvents: 3, mode: "stall" },
    });
    const run = await runLoop(localEnv({ PENCIL_TIMEOUT_IDLE_MS: "300" }));
    expect(run.errors).toHaveLength(1);
    expect((run.errors[0] as Error).message).toContain("sent nothing for 300 ms");
  });

  test("a server that keeps dripping but never finishes fails after PENCIL_TIMEOUT_STEP_MS", async () => {
    groq.enqueue({ kind: "reply", text: "word ".repeat(400), eventDelayMs: 50 });
    const run = await runLoop(localEnv({ PENCIL_TIMEOUT_IDLE_MS: "5000", PENCIL_TIMEOUT_STEP_MS: "600" }));
    expect(run.errors).toHaveLength(1);
    expect((run.errors[0] as Error).message).toContain("did not finish the step within 600 ms");
  });

  test("a cloud primary that stalls mid-step is abandoned for the fallback, which answers the step whole", async () => {
    groq.enqueue({ kind: "reply", text: "Half an answer", fail: { afterEvents: 2, mode: "stall" } });
    openrouter.enqueue(textReply("A whole answer."));
    const run = await runLoop({ ...cloudEnv(), PENCIL_TIMEOUT_IDLE_MS: "300" });
    expect(run.errors).toEqual([]);
    expect(run.steps.map((s) => s.text)).toEqual(["A whole answer."]);
    expect(run.fallbacks[0]).toContain("sent nothing for 300 ms");
  });

  test("a timeout that is not a positive whole number of milliseconds is a configuration error naming the variable", () => {
    expect(() => resolveModels({ ...cloudEnv(), PENCIL_TIMEOUT_STEP_MS: "10m" })).toThrow(UsageFailure);
    expect(() => resolveModels({ ...cloudEnv(), PENCIL_TIMEOUT_IDLE_MS: "0" })).toThrow(
      /PENCIL_TIMEOUT_IDLE_MS=0 is not a number of milliseconds/,
    );
  });
});
