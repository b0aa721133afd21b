import { MissingModelKeyError } from "../core/errors/missing-model-key-error.ts";
import type { ModelEnv } from "../ai/model-specs.ts";
import { resolveModels } from "../ai/resolve-models.ts";
import type { ChatModel } from "./enrich.ts";

/** The chat model for enrichment and answers, or null when no model is configured (the brain then works without one). */
export function chatFromEnv(env: ModelEnv, options: { model?: string; fetch?: typeof fetch } = {}): ChatModel | null {
  try {
    const resolved = resolveModels(env, {
      ...(options.model ? { model: options.model } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    return { model: resolved.model, label: resolved.labels[0]! };
  } catch (error) {
    if (MissingModelKeyError.isInstance(error)) return null;
    throw error;
  }
}
