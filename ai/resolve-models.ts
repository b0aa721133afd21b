import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamResult,
} from "@ai-sdk/provider";
import { FallbackModel, type FallbackOptions } from "./fallback-model.ts";
import { UsageFailure } from "../core/errors/usage-failure.ts";
import { modelSpecs, type ModelEnv, type ModelSpec } from "./model-specs.ts";

/** One of Pencil's model timeouts: its variable, and its default for cloud providers and for a local server. */
interface TimeoutSetting {
  variable: string;
  option: "firstByteTimeoutMs" | "idleTimeoutMs" | "stepTimeoutMs";
  cloud: number;
  local: number;
}

/**
 * Pencil's own timeouts of a model call (the HTTP client's are turned off, so these
 * are the ones that apply). A local model on a CPU may read a long prompt for minutes
 * before its first token, and has no fallback to hurry to: it gets longer defaults.
 */
const MODEL_TIMEOUTS: readonly TimeoutSetting[] = [
  { variable: "PENCIL_TIMEOUT_FIRST_BYTE_MS", option: "firstByteTimeoutMs", cloud: 60_000, local: 300_000 },
  { variable: "PENCIL_TIMEOUT_IDLE_MS", option: "idleTimeoutMs", cloud: 60_000, local: 120_000 },
  { variable: "PENCIL_TIMEOUT_STEP_MS", option: "stepTimeoutMs", cloud: 600_000, local: 1_800_000 },
];

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
 * names the variables) or UsageFailure; both mean exit code 2.
 */
export function resolveModels(env: ModelEnv, options: ResolveModelsOptions = {}): ResolvedModels {
  const specs = modelSpecs(env, options.model);
  const chain = specs.map((spec) => ({ label: spec.label, model: createModel(spec, options.fetch) }));
  const local = specs[0]?.provider === "local";
  const timeouts: Partial<Record<TimeoutSetting["option"], number>> = {};
  for (const t of MODEL_TIMEOUTS)
    timeouts[t.option] = options[t.option] ?? readTimeout(env, t.variable) ?? (local ? t.local : t.cloud);
  return { model: new FallbackModel(chain, { ...options, ...timeouts }), specs, labels: specs.map((s) => s.label) };
}

/** A timeout variable in milliseconds, or undefined when unset; anything but a positive whole number is a configuration error (exit 2). */
function readTimeout(env: ModelEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) <= 0) {
    throw new UsageFailure(
      `${name}=${raw} is not a number of milliseconds: set it to a positive whole number (e.g. ${name}=60000), or unset it for the default.`,
    );
  }
  return Number(raw);
}

/**
 * Bun's fetch gives up on a response after 5 minutes of silence, whatever the caller's
 * own deadline: turned off here, so Pencil's documented timeouts are the ones that apply.
 */
function withoutClientTimeout(fetchImpl: typeof fetch = fetch): typeof fetch {
  const wrapped = (input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    fetchImpl(input, { ...init, timeout: false } as RequestInit);
  return Object.assign(wrapped, { preconnect: fetch.preconnect }) as typeof fetch;
}

/**
 * One provider client for one spec, with the spec's base URL used exactly. A local
 * server (Ollama, llama.cpp, LM Studio) gets the generic OpenAI-compatible client.
 * The client's library loads at the model's first call (see LazyModel).
 */
export function createModel(spec: ModelSpec, customFetch?: typeof fetch): LanguageModelV4 {
  const fetchImpl = withoutClientTimeout(customFetch);
  return new LazyModel(spec, () => providerModel(spec, fetchImpl));
}

/** The provider's own model for `spec`, its library loaded now. */
async function providerModel(spec: ModelSpec, fetchImpl: typeof fetch): Promise<LanguageModelV4> {
  switch (spec.provider) {
    case "groq": {
      const { createGroq } = await import("@ai-sdk/groq");
      return createGroq({ apiKey: spec.apiKey, baseURL: spec.baseURL, fetch: fetchImpl })(spec.modelId);
    }
    case "local": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      // The generic OpenAI-compatible client reports token usage from the standard `usage` field.
      return createOpenAICompatible({
        name: "local",
        apiKey: spec.apiKey,
        baseURL: spec.baseURL ?? "",
        fetch: fetchImpl,
        includeUsage: true,
      })(spec.modelId);
    }
    case "openrouter": {
      const { createOpenRouter } = await import("@openrouter/ai-sdk-provider");
      // Usage accounting makes OpenRouter report each call's price, shown in the Telegram cost footer.
      return createOpenRouter({
        apiKey: spec.apiKey,
        baseURL: spec.baseURL,
        fetch: fetchImpl,
        compatibility: "strict",
        appName: "Pencil",
      })(spec.modelId, { usage: { include: true } });
    }
  }
}

/**
 * A provider's model whose client library is loaded at its first call, not when the chain is built: a run with Groq
 * alone never loads OpenRouter's or the OpenAI-compatible client, and a command that reopens a run without calling a
 * model (rewind, discard, a review) loads none (each is 5–20 ms of a start). Every call goes to the provider's model.
 */
class LazyModel implements LanguageModelV4 {
  readonly specificationVersion = "v4";
  /** Pencil's name of the provider (`groq`, `openrouter`, `local`); the loaded client's own name may differ. */
  readonly provider: string;
  readonly modelId: string;
  private loaded: Promise<LanguageModelV4> | null = null;

  constructor(
    spec: ModelSpec,
    private readonly load: () => Promise<LanguageModelV4>,
  ) {
    this.provider = spec.provider;
    this.modelId = spec.modelId;
  }

  private model(): Promise<LanguageModelV4> {
    this.loaded ??= this.load();
    return this.loaded;
  }

  get supportedUrls(): PromiseLike<Record<string, RegExp[]>> {
    return this.model().then((m) => m.supportedUrls);
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    return (await this.model()).doGenerate(options);
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    return (await this.model()).doStream(options);
  }
}
