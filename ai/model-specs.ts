import { MissingModelKeyError } from "../core/errors/missing-model-key-error.ts";
import { UsageFailure } from "../core/errors/usage-failure.ts";

/** The providers Pencil talks to; `local` is any OpenAI-compatible server (Ollama, llama.cpp, LM Studio). */
export type ProviderName = "groq" | "openrouter" | "local";

/** Groq's model when GROQ_DEFAULT_MODEL is not set. */
export const DEFAULT_GROQ_MODEL = "openai/gpt-oss-120b";
/** OpenRouter's model when OPENROUTER_DEFAULT_MODEL is not set: the same model as Groq's, so a fallback step behaves alike. */
export const DEFAULT_OPENROUTER_MODEL = "openai/gpt-oss-120b";

/** The environment as a plain record (`process.env`, `Bun.env`, or a test's own). */
export type ModelEnv = Readonly<Record<string, string | undefined>>;

/** Everything needed to build one model client: provider, model id, base URL (undefined: the provider's own), key. */
export interface ModelSpec {
  provider: ProviderName;
  modelId: string;
  baseURL: string | undefined;
  apiKey: string;
  /** `provider:model-id`, e.g. `groq:openai/gpt-oss-120b`: shown to the user and stored in changesets. */
  label: string;
}

const PROVIDERS: ReadonlySet<string> = new Set<ProviderName>(["groq", "openrouter", "local"]);

/** Every variable that selects a model, as named in the messages. */
const MODEL_VARIABLES = ["GROQ_API_KEY", "OPENROUTER_API_KEY", "LOCAL_LLM_BASE_URL", "LOCAL_LLM_MODEL"];

/**
 * The chain of models to use, primary first, from the environment and an optional
 * `--model` override. Rules:
 * - `LOCAL_LLM_BASE_URL` set (or `--model local:NAME`): the local server alone, with
 *   `LOCAL_LLM_MODEL` (or NAME). No cloud fallback: code meant for a local model is
 *   never sent to a cloud provider behind the user's back.
 * - otherwise Groq (`GROQ_API_KEY`) first and OpenRouter (`OPENROUTER_API_KEY`) as its
 *   fallback, whichever have keys.
 * - `--model NAME` replaces the primary's model; `--model groq:NAME` or
 *   `--model openrouter:NAME` puts that provider first with NAME (the other stays the fallback).
 * Throws MissingModelKeyError when the chosen provider has no key, UsageFailure for a
 * malformed override or a local server without a model name.
 */
export function modelSpecs(env: ModelEnv, override?: string): ModelSpec[] {
  const wanted = override === undefined ? undefined : parseOverride(override);
  const localBase = read(env, "LOCAL_LLM_BASE_URL");
  if (wanted?.provider === "local" || (wanted?.provider === undefined && localBase !== undefined)) {
    if (localBase === undefined) {
      throw new MissingModelKeyError(
        `--model ${override} needs LOCAL_LLM_BASE_URL: set it to your server's OpenAI-compatible base URL (e.g. http://127.0.0.1:11434/v1 for Ollama).`,
        ["LOCAL_LLM_BASE_URL"],
      );
    }
    const modelId = wanted?.model ?? read(env, "LOCAL_LLM_MODEL");
    if (modelId === undefined) {
      throw new UsageFailure(
        "LOCAL_LLM_BASE_URL is set but LOCAL_LLM_MODEL is not: set it to a model your server serves (e.g. qwen2.5-coder:7b), pass --model NAME, or unset LOCAL_LLM_BASE_URL to use Groq or OpenRouter.",
      );
    }
    // Local servers need no key; a placeholder keeps every client from reading a cloud key from the environment.
    return [spec("local", modelId, localBase, "local")];
  }

  const groqKey = read(env, "GROQ_API_KEY");
  const openrouterKey = read(env, "OPENROUTER_API_KEY");
  const groq =
    groqKey === undefined
      ? undefined
      : spec("groq", read(env, "GROQ_DEFAULT_MODEL") ?? DEFAULT_GROQ_MODEL, read(env, "GROQ_BASE_URL"), groqKey);
  const openrouter =
    openrouterKey === undefined
      ? undefined
      : spec(
          "openrouter",
          read(env, "OPENROUTER_DEFAULT_MODEL") ?? DEFAULT_OPENROUTER_MODEL,
          read(env, "OPENROUTER_BASE_URL"),
          openrouterKey,
        );

  if (wanted?.provider === "groq" || wanted?.provider === "openrouter") {
    const chosen = wanted.provider === "groq" ? groq : openrouter;
    const keyName = wanted.provider === "groq" ? "GROQ_API_KEY" : "OPENROUTER_API_KEY";
    if (chosen === undefined) {
      throw new MissingModelKeyError(
        `--model ${override} needs ${keyName}: set it in the environment or in .env (\`pencil demo\` needs no key).`,
        [keyName],
      );
    }
    const other = wanted.provider === "groq" ? openrouter : groq;
    return [spec(chosen.provider, wanted.model, chosen.baseURL, chosen.apiKey), ...(other ? [other] : [])];
  }

  const chain = [groq, openrouter].filter((s): s is ModelSpec => s !== undefined);
  const primary = chain[0];
  if (primary === undefined) {
    throw new MissingModelKeyError(
      "No model is configured. Set GROQ_API_KEY (Groq, the primary) or OPENROUTER_API_KEY (OpenRouter, the fallback), " +
        "or LOCAL_LLM_BASE_URL and LOCAL_LLM_MODEL for a local OpenAI-compatible server, in the environment or in .env. " +
        "`pencil demo` needs none of them.",
      MODEL_VARIABLES,
    );
  }
  if (wanted !== undefined) chain[0] = spec(primary.provider, wanted.model, primary.baseURL, primary.apiKey);
  return chain;
}

/** Splits `--model` into an optional known provider prefix and the model name; an unknown prefix is part of the name (e.g. `qwen2.5-coder:7b`). */
function parseOverride(value: string): { provider?: ProviderName; model: string } {
  const trimmed = value.trim();
  if (trimmed === "")
    throw new UsageFailure(
      "--model needs a model name, e.g. --model openai/gpt-oss-120b or --model openrouter:openai/gpt-oss-120b.",
    );
  const colon = trimmed.indexOf(":");
  const prefix = colon > 0 ? trimmed.slice(0, colon) : "";
  if (!PROVIDERS.has(prefix)) return { model: trimmed };
  const model = trimmed.slice(colon + 1).trim();
  if (model === "")
    throw new UsageFailure(
      `--model ${trimmed} needs a model name after the colon, e.g. ${prefix}:openai/gpt-oss-120b.`,
    );
  return { provider: prefix as ProviderName, model };
}

/** An own, non-blank variable of `env`, trimmed; undefined otherwise. */
function read(env: ModelEnv, name: string): string | undefined {
  if (!Object.hasOwn(env, name)) return undefined;
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function spec(provider: ProviderName, modelId: string, baseURL: string | undefined, apiKey: string): ModelSpec {
  return { provider, modelId, baseURL, apiKey, label: `${provider}:${modelId}` };
}

// Context windows of the models people run through Pencil, in tokens, matched on the model id (first match wins).
const KNOWN_WINDOWS: [RegExp, number][] = [
  [/gpt-oss/i, 131_072],
  [/llama-?3\.[1-3]|llama-?4/i, 131_072],
  [/qwen-?2\.5-coder|qwen2\.5/i, 32_768],
  [/qwen-?3-coder/i, 262_144],
  [/qwen-?3/i, 40_960],
  [/deepseek/i, 65_536],
  [/kimi|moonshot/i, 131_072],
  [/gemma/i, 8_192],
  [/mistral|codestral|devstral/i, 32_768],
];
/** A cloud model's window when its id is not known. */
const CLOUD_WINDOW = 131_072;
/** A local model's window when neither it nor PENCIL_CONTEXT_WINDOW is known: what Ollama and llama.cpp serve when configured for coding. */
const LOCAL_WINDOW = 32_768;

/**
 * The context window of a model in tokens: PENCIL_CONTEXT_WINDOW when set (a local
 * server's own setting, e.g. Ollama's num_ctx), else the model's known window, else
 * a default for its kind of provider.
 */
export function contextWindowOf(spec: Pick<ModelSpec, "provider" | "modelId"> | undefined, env: ModelEnv): number {
  const set = Number(read(env, "PENCIL_CONTEXT_WINDOW"));
  if (Number.isFinite(set) && set > 0) return Math.floor(set);
  if (spec === undefined) return CLOUD_WINDOW;
  const known = KNOWN_WINDOWS.find(([pattern]) => pattern.test(spec.modelId));
  if (known && spec.provider !== "local") return known[1];
  // A local server serves the window it was configured with, at most the model's own.
  return spec.provider === "local" ? Math.min(known?.[1] ?? LOCAL_WINDOW, LOCAL_WINDOW) : CLOUD_WINDOW;
}
