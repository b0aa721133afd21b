/** What a note was made from: typed text, a web page, or a photo. */
export type NoteKind = "text" | "url" | "image";

/** Who wrote a note's title, tags and summary: a model's label (`groq:…`), `scripted` (keyword rules, no model), or null (not yet: waiting for `brain reindex`). */
type EnrichedBy = string | null;

/** One note of the second brain (README "The second brain"), as stored; the vector itself stays in the store. */
export interface Note {
  id: number;
  /** ISO 8601 time the note was stored. */
  createdAt: string;
  kind: NoteKind;
  /** The URL or file name the note came from; null for typed text. */
  source: string | null;
  /** The original text, or the text read from the page or photo. */
  content: string;
  title: string;
  tags: string[];
  summary: string;
  enrichedBy: EnrichedBy;
  /** The embedding model of the stored vector (`gemini:gemini-embedding-001`…); null when the note has no vector yet. */
  embeddingModel: string | null;
}

/** A note about to be stored: everything but its id and time, plus its vector when one was made. */
export type NewNote = Omit<Note, "id" | "createdAt"> & { embedding: number[] | null };

/** The fields a model writes about a note. */
export interface Enrichment {
  title: string;
  tags: string[];
  summary: string;
}

/** Width of every stored vector: shorter vectors are zero-padded (cosine similarity is unchanged), longer ones refused. */
export const VECTOR_DIMENSIONS = 1536;
