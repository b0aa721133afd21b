import { embedMany, type EmbeddingModel } from "ai";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import { UsageFailure } from "../core/errors/usage-failure.ts";
import type { ModelEnv } from "../ai/model-specs.ts";
import { chunkText, MAX_EMBEDDED_CHUNKS } from "./chunk.ts";
import { VECTOR_DIMENSIONS } from "./note.ts";

/** Gemini's embedding model when none is named. */
const DEFAULT_GEMINI_EMBED = "gemini-embedding-001";
/** OpenRouter's embedding model when none is named (1,536 dimensions, like Gemini's here). */
const DEFAULT_OPENROUTER_EMBED = "openai/text-embedding-3-small";

/** Turns text into vectors with one model; its label is what every note records. */
export interface Embedder {
  /** `provider:model`, e.g. `gemini:gemini-embedding-001`: stored with each vector; vectors of two labels are never compared. */
  readonly label: string;
  /** One vector for a whole note: the mean of its pieces' unit vectors (a long note is cut into pieces first). */
  embedDocument(text: string, signal?: AbortSignal): Promise<number[]>;
  /** The vector of a question. */
  embedQuery(text: string, signal?: AbortSignal): Promise<number[]>;
}

type Provider = "gemini" | "openrouter" | "local";

/**
 * The embedder the environment selects, or null when there is none (the brain then
 * works on full-text search alone). Order: PENCIL_EMBED_MODEL (`gemini:NAME`,
 * `openrouter:NAME`, `local:NAME`), else Gemini with GEMINI_API_KEY, else OpenRouter
 * with OPENROUTER_API_KEY. Throws UsageFailure for a malformed override or one
 * whose key or server is missing.
 */
export function embedderFromEnv(env: ModelEnv, fetchImpl?: typeof fetch): Embedder | null {
  const override = read(env, "PENCIL_EMBED_MODEL");
  if (override !== undefined) {
    const colon = override.indexOf(":");
    const provider = override.slice(0, colon);
    const name = override.slice(colon + 1).trim();
    if (colon <= 0 || !["gemini", "openrouter", "local"].includes(provider) || !name) {
      throw new UsageFailure(
        `PENCIL_EMBED_MODEL="${override}" is not understood: use gemini:NAME, openrouter:NAME or local:NAME (e.g. local:nomic-embed-text).`,
      );
    }
    return build(provider as Provider, name, env, fetchImpl);
  }
  if (read(env, "GEMINI_API_KEY")) return build("gemini", DEFAULT_GEMINI_EMBED, env, fetchImpl);
  if (read(env, "OPENROUTER_API_KEY")) return build("openrouter", DEFAULT_OPENROUTER_EMBED, env, fetchImpl);
  return null;
}

function build(provider: Provider, name: string, env: ModelEnv, fetchImpl?: typeof fetch): Embedder {
  const label = `${provider}:${name}`;
  const need = (variable: string): string => {
    const value = read(env, variable);
    if (value === undefined)
      throw new UsageFailure(
        `The embedding model ${label} needs ${variable}: set it in .env, or choose another with PENCIL_EMBED_MODEL.`,
      );
    return value;
  };
  let model: EmbeddingModel;
  let options: (task: "document" | "query") => Record<string, Record<string, string | number>> = () => ({});
  if (provider === "gemini") {
    const baseURL = read(env, "GEMINI_BASE_URL");
    model = createGoogleGenerativeAI({
      apiKey: need("GEMINI_API_KEY"),
      ...(baseURL ? { baseURL } : {}),
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    }).embeddingModel(name);
    options = (task) => ({
      google: {
        outputDimensionality: VECTOR_DIMENSIONS,
        taskType: task === "query" ? "RETRIEVAL_QUERY" : "RETRIEVAL_DOCUMENT",
      },
    });
  } else if (provider === "openrouter") {
    const baseURL = read(env, "OPENROUTER_BASE_URL");
    model = createOpenRouter({
      apiKey: need("OPENROUTER_API_KEY"),
      ...(baseURL ? { baseURL } : {}),
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
      appName: "Pencil",
    }).textEmbeddingModel(name);
  } else {
    model = createOpenAICompatible({
      name: "local",
      apiKey: "local",
      baseURL: need("LOCAL_LLM_BASE_URL"),
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    }).embeddingModel(name);
  }
  // No retries: a note whose vector fails is stored without one and embedded by `brain reindex`; a question falls back to full text.
  const embed = async (values: string[], task: "document" | "query", signal?: AbortSignal): Promise<number[][]> => {
    const { embeddings } = await embedMany({
      model,
      values,
      providerOptions: options(task),
      maxRetries: 0,
      ...(signal ? { abortSignal: signal } : {}),
    });
    for (const vector of embeddings) {
      if (vector.length === 0 || vector.length > VECTOR_DIMENSIONS || vector.some((x) => !Number.isFinite(x))) {
        throw new Error(
          `${label} returned a vector of ${vector.length} dimensions; the brain needs 1 to ${VECTOR_DIMENSIONS} finite numbers.`,
        );
      }
    }
    return embeddings;
  };
  return {
    label,
    async embedDocument(text, signal) {
      const pieces = chunkText(text).slice(0, MAX_EMBEDDED_CHUNKS);
      return meanOfUnitVectors(await embed(pieces.length ? pieces : [" "], "document", signal));
    },
    async embedQuery(text, signal) {
      return (await embed([text], "query", signal))[0]!;
    },
  };
}

/** The mean of the vectors after scaling each to length 1, so every piece of a note counts alike. */
function meanOfUnitVectors(vectors: number[][]): number[] {
  const width = Math.max(...vectors.map((v) => v.length));
  const sum = new Array<number>(width).fill(0);
  for (const v of vectors) {
    const norm = Math.hypot(...v) || 1;
    for (const [i, x] of v.entries()) sum[i]! += x / norm;
  }
  return sum.map((x) => x / vectors.length);
}

function read(env: ModelEnv, name: string): string | undefined {
  if (!Object.hasOwn(env, name)) return undefined;
  const value = env[name]?.trim();
  return value ? value : undefined;
}
