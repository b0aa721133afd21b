import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { modelSpecs, type ModelSpec } from "../../ai/model-specs.ts";
import { visionFromEnv, DEFAULT_GROQ_VISION_MODEL } from "../../ai/vision.ts";
import { formatDollars, type Price, readPrices } from "../../app/run-cost.ts";
import type { Env } from "../../core/pencil-home.ts";
import { embedderFromEnv } from "../../brain/embedder.ts";
import type { ConfigSources } from "./config-files.ts";

// Which models Pencil would use, for `pencil doctor`: each chat model of the chain, the
// embedding and vision models when configured, where each was chosen, and its price.

/** One model as doctor reports it. */
export interface ModelEntry {
  /** `provider:model`. */
  label: string;
  /** `primary`, `fallback`, `embeddings` or `vision`. */
  role: string;
  /** Where the provider was chosen: the variable that holds its key or server (`GROQ_API_KEY`, `LOCAL_LLM_BASE_URL`). */
  provider: string;
  /** Where the model's name came from: `--model`, a variable (`GROQ_DEFAULT_MODEL`), or `default` (Pencil's own). */
  model: string;
  /** The file that set those variables, or `the environment`. */
  setIn: string;
  /** Dollars per million tokens from telegram.prices, or null when none is set; chat models only. */
  price?: Price | null;
  /** True for a model on the owner's own server: it costs nothing per token. */
  free?: boolean;
}

const KEY_OF: Record<string, string> = {
  groq: "GROQ_API_KEY",
  openrouter: "OPENROUTER_API_KEY",
  local: "LOCAL_LLM_BASE_URL",
  gemini: "GEMINI_API_KEY",
};
const MODEL_VARIABLE: Record<string, string> = {
  groq: "GROQ_DEFAULT_MODEL",
  openrouter: "OPENROUTER_DEFAULT_MODEL",
  local: "LOCAL_LLM_MODEL",
};

/**
 * The models of this configuration; a chat chain that cannot be built (no key) is left out,
 * since doctor's own model check reports that with its fix.
 */
export function modelOverview(
  env: Env,
  override: string | undefined,
  pencilHome: string,
  sources?: ConfigSources,
): ModelEntry[] {
  const setIn = fileOf(env, sources);
  const prices = readPrices(pencilHome);
  const entries: ModelEntry[] = [];
  let chain: ModelSpec[] = [];
  try {
    chain = modelSpecs(env, override);
  } catch {
    // Reported by the model check.
  }
  chain.forEach((spec, i) => {
    const variable = MODEL_VARIABLE[spec.provider]!;
    const fromOverride = i === 0 && override !== undefined;
    const model = fromOverride ? "--model" : env[variable]?.trim() ? variable : "default";
    const key = KEY_OF[spec.provider]!;
    entries.push({
      label: spec.label,
      role: i === 0 ? "primary" : "fallback",
      provider: key,
      model,
      setIn: setIn([key, ...(model === variable ? [variable] : [])]),
      price: Object.hasOwn(prices, spec.label) ? prices[spec.label]! : null,
      free: spec.provider === "local",
    });
  });
  const embed = embeddingOf(env);
  if (embed) entries.push({ ...embed, role: "embeddings", setIn: setIn([embed.provider, embed.model]) });
  try {
    const vision = visionFromEnv(env);
    if (vision) {
      const provider = vision.label.slice(0, vision.label.indexOf(":"));
      const model =
        provider === "local"
          ? "LOCAL_LLM_MODEL"
          : provider === "groq" && vision.label !== `groq:${DEFAULT_GROQ_VISION_MODEL}`
            ? "GROQ_VISION_MODEL"
            : "default";
      entries.push({
        label: vision.label,
        role: "vision",
        provider: KEY_OF[provider]!,
        model,
        setIn: setIn([KEY_OF[provider]!, model]),
      });
    }
  } catch {
    // A vision model that cannot be built is the photo feature's to report.
  }
  return entries;
}

/** One line per model: `primary groq:… — key GROQ_API_KEY, model Pencil's default (the environment); price $0.15 in / $0.75 out per million tokens`. */
export function describeModel(entry: ModelEntry): string {
  const model =
    entry.model === "default"
      ? "Pencil's default model"
      : entry.model === "--model"
        ? "model from --model"
        : entry.model;
  const price =
    entry.price === undefined
      ? ""
      : entry.free
        ? "; free (your own server)"
        : entry.price
          ? `; price ${formatDollars(entry.price.input)} in / ${formatDollars(entry.price.output)} out per million tokens`
          : "; no price set (telegram.prices in settings.json), so no cost is shown";
  return `${entry.role} ${entry.label} — ${entry.provider}, ${model} (${entry.setIn})${price}`;
}

/** The embedding model the brain would use (embedderFromEnv's choice) and the variables that chose it; null when none. */
function embeddingOf(env: Env): { label: string; provider: string; model: string } | null {
  let label: string | undefined;
  try {
    label = embedderFromEnv(env)?.label;
  } catch {
    // A malformed PENCIL_EMBED_MODEL: the brain embeddings check says what is wrong.
  }
  if (!label) return null;
  const provider = KEY_OF[label.slice(0, label.indexOf(":"))] ?? "PENCIL_EMBED_MODEL";
  return { label, provider, model: env.PENCIL_EMBED_MODEL?.trim() ? "PENCIL_EMBED_MODEL" : "default" };
}

/** Which configuration file set these variables (the first that defines one with the value in force), else the environment. */
function fileOf(env: Env, sources?: ConfigSources): (names: string[]) => string {
  const files = [...(sources?.bun ?? []), ...(sources?.user.read ? [sources.user.path] : [])].map((path) => {
    try {
      return { path, values: parseEnv(readFileSync(path, "utf8")) as Record<string, string> };
    } catch {
      return { path, values: {} as Record<string, string> };
    }
  });
  return (names) => {
    const real = names.filter((n) => n !== "default" && n !== "--model");
    const found = files.filter((f) => real.some((n) => Object.hasOwn(f.values, n) && f.values[n] === env[n]));
    return found.length ? found.map((f) => f.path).join(", ") : "the environment";
  };
}
