import { existsSync } from "node:fs";
import type { ModelEnv } from "../ai/model-specs.ts";
import { pencilHomeOf } from "../core/pencil-home.ts";
import { embedderFromEnv } from "./embedder.ts";
import { openStore, usesInsforge } from "./open-brain.ts";
import { brainDir } from "./brain-dir.ts";

/** The brain as `doctor` reports it: one line each for the store and the embedding model, with the fix when one is wanted. */
export interface BrainReport {
  store: { ok: boolean; detail: string; fix?: string };
  embeddings: { ok: boolean; detail: string; fix?: string };
}

/** Which store, which embedding model, how many notes, how many wait for `brain reindex`. Never creates a brain that does not exist. */
export async function brainReport(env: ModelEnv): Promise<BrainReport> {
  let embedLabel: string | null = null;
  let embeddings: BrainReport["embeddings"];
  try {
    embedLabel = embedderFromEnv(env)?.label ?? null;
    embeddings = embedLabel
      ? { ok: true, detail: embedLabel }
      : {
          ok: false,
          detail: "none: notes are found by full-text search only",
          fix: "set GEMINI_API_KEY (or OPENROUTER_API_KEY, or PENCIL_EMBED_MODEL=local:nomic-embed-text with LOCAL_LLM_BASE_URL)",
        };
  } catch (error) {
    embeddings = {
      ok: false,
      detail: (error as Error).message,
      fix: "correct PENCIL_EMBED_MODEL or set the key it names",
    };
  }
  if (!usesInsforge(env) && !existsSync(brainDir(pencilHomeOf(env)))) {
    return {
      store: {
        ok: true,
        detail: `embedded, ${brainDir(pencilHomeOf(env))} (no notes yet: created by the first brain dump)`,
      },
      embeddings,
    };
  }
  try {
    const store = await openStore(env, { lockWaitMs: 2000 });
    try {
      const counts = await store.counts(embedLabel);
      const waiting = counts.waiting ? `, ${counts.waiting} waiting for pencil brain reindex` : "";
      return { store: { ok: true, detail: `${store.label}: ${counts.notes} note(s)${waiting}` }, embeddings };
    } finally {
      await store.close();
    }
  } catch (error) {
    const message = (error as Error).message;
    // The bot holding the brain for a moment is not a fault.
    if (message.includes("in use by another Pencil process"))
      return { store: { ok: true, detail: message }, embeddings };
    return { store: { ok: false, detail: message, fix: "see the message: the brain was not changed" }, embeddings };
  }
}
