import { VECTOR_DIMENSIONS, type Note } from "./note.ts";
import type { BrainCounts } from "./store.ts";
import { BrainStoreError } from "../core/errors/brain-store-error.ts";

/** The columns of a note as both stores read them (never the vector, never the full-text column). */
export const COLUMNS = "id, created_at, kind, source, content, title, tags, summary, enriched_by, embedding_model";

/** A note row as the database returns it (ids may come as strings, times as Date or text). */
export interface NoteRow {
  id: number | string;
  created_at: Date | string;
  kind: Note["kind"];
  source: string | null;
  content: string;
  title: string;
  tags: string[];
  summary: string;
  enriched_by: string | null;
  embedding_model: string | null;
}

/** One row of `brain_counts`. */
export interface CountRow {
  model: string | null;
  notes: number | string;
  waiting: number | string;
}

/** Adds up `brain_counts` rows. */
export function sumCounts(rows: CountRow[]): BrainCounts {
  const byModel: Record<string, number> = {};
  let notes = 0;
  let waiting = 0;
  for (const row of rows) {
    byModel[row.model ?? "none"] = Number(row.notes);
    notes += Number(row.notes);
    waiting += Number(row.waiting);
  }
  return { notes, waiting, byModel };
}

/** A vector as pgvector's text form, zero-padded to the column's width; null stays null. */
export function vectorText(values: number[] | null | undefined): string | null {
  if (!values) return null;
  if (values.length > VECTOR_DIMENSIONS) {
    throw new BrainStoreError(
      `The embedding has ${values.length} dimensions; the brain stores at most ${VECTOR_DIMENSIONS}. Choose a model with ${VECTOR_DIMENSIONS} or fewer (PENCIL_EMBED_MODEL).`,
    );
  }
  const padded =
    values.length === VECTOR_DIMENSIONS
      ? values
      : [...values, ...new Array<number>(VECTOR_DIMENSIONS - values.length).fill(0)];
  return `[${padded.join(",")}]`;
}

/** A database row as a Note. */
export function toNote(row: NoteRow): Note {
  return {
    id: Number(row.id),
    createdAt: row.created_at instanceof Date ? row.created_at.toISOString() : new Date(row.created_at).toISOString(),
    kind: row.kind,
    source: row.source,
    content: row.content,
    title: row.title,
    tags: row.tags ?? [],
    summary: row.summary,
    enrichedBy: row.enriched_by,
    embeddingModel: row.embedding_model,
  };
}
