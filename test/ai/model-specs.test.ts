import { describe, expect, test } from "bun:test";
import { MissingModelKeyError } from "../../core/errors/missing-model-key-error.ts";
import { UsageFailure } from "../../core/errors/usage-failure.ts";
import { DEFAULT_GROQ_MODEL, DEFAULT_OPENROUTER_MODEL, modelSpecs } from "../../ai/model-specs.ts";
import { resolveModels } from "../../ai/resolve-models.ts";

const GROQ = `groq:${DEFAULT_GROQ_MODEL}`;
const OPENROUTER = `openrouter:${DEFAULT_OPENROUTER_MODEL}`;

describe("modelSpecs from the environment", () => {
  test("no key at all: MissingModelKeyError names the variables and says the demo needs none", () => {
    let caught: unknown;
    try {
      resolveModels({});
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(MissingModelKeyError);
    expect(caught).toBeInstanceOf(UsageFailure);
    const message = (caught as Error).message;
    for (const name of ["GROQ_API_KEY", "OPENROUTER_API_KEY", "LOCAL_LLM_BASE_URL", "LOCAL_LLM_MODEL", "pencil demo"])
      expect(message).toContain(name);
    // Blank values count as unset.
    expect(() => modelSpecs({ GROQ_API_KEY: "  ", OPENROUTER_API_KEY: "" })).toThrow(MissingModelKeyError);
  });

  test("Groq first, OpenRouter as fallback; OpenRouter is primary without a Groq key; defaults and base URLs", () => {
    const both = modelSpecs({
      GROQ_API_KEY: "g",
      OPENROUTER_API_KEY: "o",
      GROQ_DEFAULT_MODEL: "llama-3.3-70b-versatile",
      OPENROUTER_BASE_URL: "http://127.0.0.1:9/x",
    });
    expect(both.map((s) => s.label)).toEqual(["groq:llama-3.3-70b-versatile", OPENROUTER]);
    expect(both.map((s) => s.baseURL)).toEqual([undefined, "http://127.0.0.1:9/x"]);
    const onlyOpenRouter = modelSpecs({ OPENROUTER_API_KEY: "o", OPENROUTER_DEFAULT_MODEL: "qwen/qwen3-coder" });
    expect(onlyOpenRouter.map((s) => s.label)).toEqual(["openrouter:qwen/qwen3-coder"]);
  });

  test("--model overrides: plain name, provider prefix, local, and names with colons", () => {
    const env = { GROQ_API_KEY: "g", OPENROUTER_API_KEY: "o" };
    expect(modelSpecs(env, "moonshotai/kimi-k2").map((s) => s.label)).toEqual(["groq:moonshotai/kimi-k2", OPENROUTER]);
    expect(modelSpecs(env, "openrouter:anthropic/claude-sonnet-4").map((s) => s.label)).toEqual([
      "openrouter:anthropic/claude-sonnet-4",
      GROQ,
    ]);
    expect(modelSpecs(env, "some-model:free").map((s) => s.label)).toEqual(["groq:some-model:free", OPENROUTER]);
    expect(
      modelSpecs({ ...env, LOCAL_LLM_BASE_URL: "http://127.0.0.1:11434/v1" }, "local:llama3.2:3b").map((s) => s.label),
    ).toEqual(["local:llama3.2:3b"]);
    expect(() => modelSpecs({ GROQ_API_KEY: "g" }, "openrouter:x")).toThrow(/OPENROUTER_API_KEY/);
    expect(() => modelSpecs(env, "local:x")).toThrow(/LOCAL_LLM_BASE_URL/);
    expect(() => modelSpecs(env, "groq:")).toThrow(UsageFailure);
    expect(() => modelSpecs(env, " ")).toThrow(UsageFailure);
    expect(() => modelSpecs({ LOCAL_LLM_BASE_URL: "http://127.0.0.1:11434/v1" })).toThrow(/LOCAL_LLM_MODEL/);
  });

  test("names that look like Object.prototype members are plain names, never lookups", () => {
    const env = { GROQ_API_KEY: "g" };
    expect(modelSpecs(env, "constructor:x").map((s) => s.label)).toEqual(["groq:constructor:x"]);
    expect(modelSpecs(env, "__proto__:y").map((s) => s.label)).toEqual(["groq:__proto__:y"]);
    expect(modelSpecs(env, "toString").map((s) => s.label)).toEqual(["groq:toString"]);
    // An inherited variable is not a configured one.
    const inherited = Object.create({ GROQ_API_KEY: "from-prototype" }) as Record<string, string>;
    expect(() => modelSpecs(inherited)).toThrow(MissingModelKeyError);
  });
});
