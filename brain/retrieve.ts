import type { Embedder } from "./embedder.ts";
import type { Note } from "./note.ts";
import type { BrainStore, ScoredId } from "./store.ts";

/** Notes an answer may use at most. */
const TOP_NOTES = 8;
/** Candidates each search brings to the fusion. */
const CANDIDATES = 40;
/** Reciprocal rank fusion's constant (the usual 60: ranks matter, raw scores of two scales do not). */
const RRF_K = 60;
/** Cosine similarity below which a note is not relevant to a question. */
const MIN_SIMILARITY = 0.55;

/** A note found for a question, with how it was found. */
export interface RetrievedNote {
  note: Note;
  /** The fused score (higher is better). */
  score: number;
  /** Cosine similarity, when the vector search found it. */
  similarity?: number;
  /** True when full-text search found it. */
  textMatch: boolean;
}

/** What retrieval found and how: `hybrid` (vectors + full text) or `full-text` (no embedder, or the embedder failed). */
export interface Retrieval {
  notes: RetrievedNote[];
  mode: "hybrid" | "full-text";
  /** Why the vector search was not used, when an embedder exists but failed. */
  vectorError?: string;
}

/**
 * Vector similarity among notes of the embedder's model, fused with full-text rank
 * by reciprocal rank fusion; notes under the minimum similarity that no full-text
 * search found are left out; the best `limit` are returned.
 */
export async function retrieve(
  store: BrainStore,
  embedder: Embedder | null,
  question: string,
  limit = TOP_NOTES,
  signal?: AbortSignal,
): Promise<Retrieval> {
  let vectorHits: ScoredId[] = [];
  let vectorError: string | undefined;
  let mode: Retrieval["mode"] = "full-text";
  const textPromise = store.matchText(question, CANDIDATES);
  if (embedder) {
    try {
      const query = await embedder.embedQuery(question, signal);
      vectorHits = await store.matchVector(query, embedder.label, CANDIDATES, MIN_SIMILARITY);
      mode = "hybrid";
    } catch (error) {
      vectorError = `${embedder.label}: ${(error as Error).message}`;
    }
  }
  const textHits = await textPromise;
  const fused = new Map<number, { score: number; similarity?: number; textMatch: boolean }>();
  for (const [rank, hit] of vectorHits.entries()) {
    fused.set(hit.id, { score: 1 / (RRF_K + rank + 1), similarity: hit.score, textMatch: false });
  }
  textHits.forEach((hit, rank) => {
    const entry = fused.get(hit.id) ?? { score: 0, textMatch: false };
    entry.score += 1 / (RRF_K + rank + 1);
    entry.textMatch = true;
    fused.set(hit.id, entry);
  });
  const best = [...fused.entries()].sort((a, b) => b[1].score - a[1].score || b[0] - a[0]).slice(0, limit);
  const notes = await store.getMany(best.map(([id]) => id));
  const byId = new Map(notes.map((n) => [n.id, n]));
  return {
    notes: best.flatMap(([id, hit]) =>
      byId.has(id)
        ? [
            {
              note: byId.get(id)!,
              score: hit.score,
              textMatch: hit.textMatch,
              ...(hit.similarity !== undefined ? { similarity: hit.similarity } : {}),
            },
          ]
        : [],
    ),
    mode,
    ...(vectorError ? { vectorError } : {}),
  };
}
