import { existsSync } from "node:fs";
import type { ModelEnv } from "../ai/model-specs.ts";
import { pencilHomeOf } from "../core/pencil-home.ts";
import type { RecalledNote, RecallDeps } from "../tools/recall.ts";
import { brainDir } from "./brain-dir.ts";

const usesInsforge = (env: ModelEnv) => Boolean(env.INSFORGE_BASE_URL?.trim() || env.INSFORGE_ANON_KEY?.trim());

/** `recall`'s search over the brain the environment configures; opens the store per call, and never creates an embedded brain that does not exist. */
export function brainRecall(env: ModelEnv): RecallDeps {
  return {
    async search(query, signal) {
      if (!usesInsforge(env) && !existsSync(brainDir(pencilHomeOf(env)))) return [];
      // Loaded on the first recall only: the brain's clients and database are not for runs that never use it.
      const [{ embedderFromEnv }, { openStore }, { retrieve }] = await Promise.all([
        import("./embedder.ts"),
        import("./open-brain.ts"),
        import("./retrieve.ts"),
      ]);
      let embedder = null;
      try {
        embedder = embedderFromEnv(env);
      } catch {
        // A misconfigured embedding model leaves full-text search.
      }
      const store = await openStore(env);
      try {
        const found = await retrieve(store, embedder, query, 5, signal);
        return found.notes.map(
          ({ note }): RecalledNote => ({
            id: note.id,
            title: note.title,
            createdAt: note.createdAt,
            kind: note.kind,
            source: note.source,
            tags: note.tags,
            content: note.content,
          }),
        );
      } finally {
        await store.close();
      }
    },
  };
}
