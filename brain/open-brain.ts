import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { BrainStoreError } from "../core/errors/brain-store-error.ts";
import { MissingModelKeyError } from "../core/errors/missing-model-key-error.ts";
import { modelSpecs, type ModelEnv } from "../ai/model-specs.ts";
import { pencilHomeOf } from "../core/pencil-home.ts";
import { Brain } from "./brain.ts";
import type { Embedder } from "./embedder.ts";
import type { ChatModel } from "./enrich.ts";
import { brainDir } from "./brain-dir.ts";
import { Originals } from "./originals.ts";
import type { BrainStore } from "./store.ts";

/** Options of openBrain: the `--model` override and a fetch for every client (tests). */
export interface OpenBrainOptions {
  model?: string;
  fetch?: typeof fetch;
  lockWaitMs?: number;
}

/** True when the environment selects the hosted store. */
export function usesInsforge(env: ModelEnv): boolean {
  return Boolean(env.INSFORGE_BASE_URL?.trim() || env.INSFORGE_ANON_KEY?.trim());
}

/**
 * The store the environment selects: InsForge when INSFORGE_BASE_URL and
 * INSFORGE_ANON_KEY are set, else the embedded database under `$PENCIL_HOME/brain`.
 */
export async function openStore(env: ModelEnv, options: OpenBrainOptions = {}): Promise<BrainStore> {
  if (usesInsforge(env)) {
    const baseUrl = env.INSFORGE_BASE_URL?.trim();
    const anonKey = env.INSFORGE_ANON_KEY?.trim();
    if (!baseUrl || !anonKey) {
      throw new BrainStoreError(
        "The hosted brain needs both INSFORGE_BASE_URL and INSFORGE_ANON_KEY; only one is set. Set the other, or unset both to use the embedded store.",
      );
    }
    const { InsforgeStore } = await import("./insforge-store.ts");
    return InsforgeStore.connect(baseUrl, anonKey, options.fetch);
  }
  const home = pencilHomeOf(env);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  // Loaded only here: PGlite's WebAssembly is not for commands that never open the brain.
  const { PgliteStore } = await import("./pglite-store.ts");
  return PgliteStore.open(brainDir(home), options.lockWaitMs !== undefined ? { lockWaitMs: options.lockWaitMs } : {});
}

/** The chat model for enrichment and answers, or null when no model is configured; the AI SDK is loaded only when there is one. */
async function chatFor(env: ModelEnv, options: OpenBrainOptions = {}): Promise<ChatModel | null> {
  try {
    modelSpecs(env, options.model);
  } catch (error) {
    if (MissingModelKeyError.isInstance(error)) return null;
    throw error;
  }
  const { chatFromEnv } = await import("./chat-from-env.ts");
  return chatFromEnv(env, options);
}

/** The variables that select an embedding model (embedderFromEnv's rules); with none set there is no embedder, and its clients are not loaded. */
const EMBEDDER_VARIABLES = ["PENCIL_EMBED_MODEL", "GEMINI_API_KEY", "OPENROUTER_API_KEY"];

async function embedderFor(env: ModelEnv, options: OpenBrainOptions): Promise<Embedder | null> {
  if (!EMBEDDER_VARIABLES.some((name) => Object.hasOwn(env, name) && env[name]?.trim())) return null;
  const { embedderFromEnv } = await import("./embedder.ts");
  return embedderFromEnv(env, options.fetch);
}

/** The brain as the environment configures it: store, embedder, chat model. Close its store when done. */
export async function openBrain(env: ModelEnv, options: OpenBrainOptions = {}): Promise<Brain> {
  // Models first: a configuration error must be reported before the database is touched.
  const embedder = await embedderFor(env, options);
  const chat = await chatFor(env, options);
  const store = await openStore(env, options);
  // Originals stay on this machine even with the hosted store (InsForge holds the text only).
  return new Brain({ store, embedder, chat, originals: new Originals(join(brainDir(pencilHomeOf(env)), "originals")) });
}
