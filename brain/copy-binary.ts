import { VECTOR_DIMENSIONS, type NewNote } from "./note.ts";
import { BrainStoreError } from "../core/errors/brain-store-error.ts";

/** The columns `notesCopyBinary` writes, in its order, for `copy brain_notes (…) from '/dev/blob' with (format binary)`. */
export const COPY_COLUMNS = "kind, source, content, title, tags, summary, enriched_by, embedding_model, embedding";

const SIGNATURE = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00]; // "PGCOPY\n\377\r\n\0"
const TEXT_OID = 25;
const encoder = new TextEncoder();

/**
 * Notes as Postgres's binary COPY format. pgvector reads a binary vector as raw
 * float4s (`vector_recv`), where its text form costs a float parse per dimension —
 * about 2 ms a 1,536-dimension vector in WebAssembly, most of a bulk load's time.
 */
export function notesCopyBinary(notes: NewNote[]): Uint8Array<ArrayBuffer> {
  const out = new Writer(notes.length * (VECTOR_DIMENSIONS * 4 + 512) + 64);
  out.bytes(Uint8Array.from(SIGNATURE));
  out.int32(0); // flags
  out.int32(0); // header extension length
  for (const note of notes) {
    out.int16(9);
    out.text(note.kind);
    out.text(note.source);
    out.text(note.content);
    out.text(note.title);
    out.textArray(note.tags);
    out.text(note.summary);
    out.text(note.enrichedBy);
    out.text(note.embeddingModel);
    out.vector(note.embedding);
  }
  out.int16(-1); // trailer
  return out.done();
}

class Writer {
  private buf: Uint8Array<ArrayBuffer>;
  private view: DataView;
  private at = 0;

  constructor(size: number) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = new Uint8Array(Math.max(this.buf.length * 2, this.at + n));
    bigger.set(this.buf);
    this.buf = bigger;
    this.view = new DataView(bigger.buffer);
  }

  int16(v: number): void {
    this.room(2);
    this.view.setInt16(this.at, v);
    this.at += 2;
  }

  int32(v: number): void {
    this.room(4);
    this.view.setInt32(this.at, v);
    this.at += 4;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  /** A field: its length, then its bytes; null is length -1. */
  text(s: string | null): void {
    if (s === null) return this.int32(-1);
    const b = encoder.encode(s);
    this.int32(b.length);
    this.bytes(b);
  }

  /** A one-dimensional text[] as `array_recv` reads it (no nulls). */
  textArray(items: string[]): void {
    const encoded = items.map((s) => encoder.encode(s));
    const header = items.length === 0 ? 12 : 20;
    this.int32(header + encoded.reduce((sum, b) => sum + 4 + b.length, 0));
    this.int32(items.length === 0 ? 0 : 1); // dimensions
    this.int32(0); // has nulls
    this.int32(TEXT_OID);
    if (items.length === 0) return;
    this.int32(items.length);
    this.int32(1); // lower bound
    for (const b of encoded) {
      this.int32(b.length);
      this.bytes(b);
    }
  }

  /** A vector as `vector_recv` reads it: dimensions, a reserved zero, big-endian float4s; zero-padded to the column's width. */
  vector(values: number[] | null): void {
    if (values === null) return this.int32(-1);
    if (values.length > VECTOR_DIMENSIONS) {
      throw new BrainStoreError(
        `The embedding has ${values.length} dimensions; the brain stores at most ${VECTOR_DIMENSIONS}. Choose a model with ${VECTOR_DIMENSIONS} or fewer (PENCIL_EMBED_MODEL).`,
      );
    }
    this.int32(4 + VECTOR_DIMENSIONS * 4);
    this.int16(VECTOR_DIMENSIONS);
    this.int16(0);
    this.room(VECTOR_DIMENSIONS * 4);
    for (let i = 0; i < VECTOR_DIMENSIONS; i++) this.view.setFloat32(this.at + i * 4, values[i] ?? 0);
    this.at += VECTOR_DIMENSIONS * 4;
  }

  done(): Uint8Array<ArrayBuffer> {
    return this.buf.slice(0, this.at);
  }
}
