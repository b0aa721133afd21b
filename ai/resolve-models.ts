import type { LanguageModelV4 } from "@ai-sdk/provider";
import { createGroq } from "@ai-sdk/groq";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import { FallbackModel, type FallbackOptions } from "./fallback-model.ts";
import { modelSpecs, type ModelEnv, type ModelSpec } from "./model-specs.ts";

/** How long a local server may stay silent before the call fails (default for local models: 10 minutes). */
export const LOCAL_IDLE_TIMEOUT_MS = 600_000;

/** Options of resolveModels: the `--model` override, a fetch for the clients, and the fallback's options. */
export interface ResolveModelsOptions extends FallbackOptions {
  /** The `--model NAME` override (`NAME`, `groq:NAME`, `openrouter:NAME` or `local:NAME`). */
  model?: string;
  /** Fetch used by every client (default: the global fetch). */
  fetch?: typeof fetch;
}

/** The models to run with: one model to hand to `streamText`, and what it is made of. */
export interface ResolvedModels {
  /** The chain wrapped once: falls back by itself and labels every step (see FallbackModel). */
  model: FallbackModel;
  /** The chain's specs, primary first (keys included: never print them). */
  specs: ModelSpec[];
  /** The chain's labels, primary first, e.g. `["groq:openai/gpt-oss-120b", "openrouter:openai/gpt-oss-120b"]`. */
  labels: string[];
}

/**
 * Builds the model chain from the environment (see `modelSpecs` for the rules) and
 * wraps it in one FallbackModel. Throws MissingModelKeyError (no key, the message
 * names the variables) or ModelConfigError; both mean exit code 2.
 */
export function resolveModels(env: ModelEnv, options: ResolveModelsOptions = {}): ResolvedModels {
  const specs = modelSpecs(env, options.model);
  const chain = specs.map((spec) => ({ label: spec.label, model: createModel(spec, options.fetch) }));
  // A local model on a CPU may read a long prompt for minutes before its first token, and has no fallback to hurry to.
  const idleTimeoutMs = options.idleTimeoutMs ?? (specs[0]?.provider === "local" ? LOCAL_IDLE_TIMEOUT_MS : undefined);
  return { model: new FallbackModel(chain, { ...options, idleTimeoutMs }), specs, labels: specs.map((s) => s.label) };
}

/**
 * One provider client for one spec, with the spec's base URL used exactly. A local
 * server (Ollama, llama.cpp, LM Studio) gets the generic OpenAI-compatible client.
 */
export function createModel(spec: ModelSpec, fetchImpl?: typeof fetch): LanguageModelV4 {
  switch (spec.provider) {
    case "groq":
      return createGroq({ apiKey: spec.apiKey, baseURL: spec.baseURL, fetch: fetchImpl })(spec.modelId);
    case "local":
      // The generic OpenAI-compatible client reports token usage from the standard `usage` field.
      return createOpenAICompatible({ name: "local", apiKey: spec.apiKey, baseURL: spec.baseURL ?? "", fetch: fetchImpl, includeUsage: true })(spec.modelId);
    case "openrouter":
      return createOpenRouter({ apiKey: spec.apiKey, baseURL: spec.baseURL, fetch: fetchImpl, compatibility: "strict", appName: "Pencil" })(spec.modelId);
  }
}
