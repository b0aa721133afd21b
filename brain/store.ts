import type { NewNote, Note } from "./note.ts";

/** One candidate of a search: the note's id and its score (cosine similarity, or full-text rank). */
export interface ScoredId {
  id: number;
  score: number;
}

/** Counts for `doctor` and `brain list`. */
export interface BrainCounts {
  notes: number;
  /** Notes whose enrichment or vector is missing (or from another embedding model than `currentModel`). */
  waiting: number;
  /** Notes per embedding model (`null` key: no vector). */
  byModel: Record<string, number>;
}

/**
 * Where notes live: the embedded PGlite database or an InsForge project. Both run
 * `brain/schema.sql`, and both search through its SQL functions
 * (`match_notes`, `search_notes`), so the results are the same.
 */
export interface BrainStore {
  /** `embedded (DIR)` or `InsForge (URL)`, for messages. */
  readonly label: string;
  insert(note: NewNote): Promise<Note>;
  get(id: number): Promise<Note | null>;
  /** Notes by id, in the order asked for (missing ids skipped). */
  getMany(ids: number[]): Promise<Note[]>;
  /** The most recent notes first. */
  list(limit: number): Promise<Note[]>;
  /** Deletes one note; false when there was none with that id. */
  remove(id: number): Promise<boolean>;
  /** Replaces a note's enrichment and/or vector. */
  update(
    id: number,
    patch: Partial<Pick<NewNote, "title" | "tags" | "summary" | "enrichedBy" | "embeddingModel" | "embedding">>,
  ): Promise<void>;
  /** Nearest notes by cosine similarity among notes of `model` only (never another model's vectors). */
  matchVector(embedding: number[], model: string, count: number, minSimilarity: number): Promise<ScoredId[]>;
  /** Full-text matches of the words of `query`, best first. */
  matchText(query: string, count: number): Promise<ScoredId[]>;
  /** Ids of notes that `brain reindex` must work on: not enriched by a model, or without a vector of `model`. */
  waitingIds(model: string | null, enrich: boolean): Promise<number[]>;
  counts(currentModel: string | null): Promise<BrainCounts>;
  close(): Promise<void>;
}
