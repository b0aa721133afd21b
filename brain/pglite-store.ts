import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { toldIfSlow } from "../core/wait-notice.ts";
import { acquireBrainLock } from "./brain-lock.ts";
import { MIGRATIONS, SCHEMA_SQL, SCHEMA_VERSION } from "./migrations.ts";
import type { NewNote, Note } from "./note.ts";
import { COPY_COLUMNS, notesCopyBinary } from "./copy-binary.ts";
import { COLUMNS, sumCounts, toNote, vectorText, type CountRow, type NoteRow as Row } from "./note-rows.ts";
import { startPglite } from "./start-pglite.ts";
import type { BrainCounts, BrainStore, ScoredId } from "./store.ts";
import { BrainStoreError } from "../core/errors/brain-store-error.ts";

/** Notes in one `insertMany` into an empty table from which the HNSW index is built after the load, not row by row. */
export const HNSW_AFTER_LOAD = 1000;

/** The embedded store: PGlite (Postgres in WebAssembly) with pgvector, in one directory, no service to run. */
export class PgliteStore implements BrainStore {
  private constructor(
    private readonly db: PGlite,
    readonly label: string,
    private readonly release: () => void,
  ) {}

  /**
   * Opens (or creates) the brain in `dir`. Refuses, touching nothing, a directory
   * that is not a database, one PGlite cannot open, or one from a newer Pencil.
   */
  static async open(dir: string, options: { lockWaitMs?: number } = {}): Promise<PgliteStore> {
    mkdirSync(dirname(dir), { recursive: true });
    const release = await acquireBrainLock(`${dir}.lock`, options.lockWaitMs);
    try {
      checkDirectory(dir);
      const starting = () => `Starting the brain's database (PGlite, ${dir})… Ctrl-C to stop.`;
      let db: PGlite;
      try {
        db = await toldIfSlow(starting, startPglite(dir));
      } catch (error) {
        throw corrupted(dir, error);
      }
      try {
        await toldIfSlow(starting, prepare(db, dir));
      } catch (error) {
        await db.close().catch(() => {});
        throw BrainStoreError.isInstance(error) ? error : corrupted(dir, error);
      }
      return new PgliteStore(db, `embedded (${dir})`, release);
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * A brain in memory only (tests and benchmarks): a new empty one, or a copy of the database `image` holds (a
   * `database.dumpDataDir()` tarball), brought to the current schema like any brain it opens.
   */
  static async inMemory(image?: Blob): Promise<PgliteStore> {
    const db = await startPglite(undefined, image);
    await prepare(db, "memory");
    return new PgliteStore(db, "embedded (in memory)", () => {});
  }

  /** The database itself, for benchmarks and tests that look under the hood. */
  get database(): PGlite {
    return this.db;
  }

  async insert(note: NewNote): Promise<Note> {
    const { rows } = await this.db.query<Row>(
      `insert into brain_notes (kind, source, content, title, tags, summary, enriched_by, embedding_model, embedding)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9::vector) returning ${COLUMNS}`,
      [
        note.kind,
        note.source,
        note.content,
        note.title,
        note.tags,
        note.summary,
        note.enrichedBy,
        note.embeddingModel,
        vectorText(note.embedding),
      ],
    );
    return toNote(rows[0]!);
  }

  /**
   * Inserts many notes in one transaction, one row each, as one binary COPY (vectors
   * as raw floats: their text form costs WebAssembly a float parse per dimension).
   * Into an empty table, a batch of `HNSW_AFTER_LOAD` notes or more is loaded without
   * the HNSW index, which is built once after (pgvector's advice for a load).
   */
  async insertMany(notes: NewNote[]): Promise<void> {
    if (notes.length === 0) return;
    const blob = new Blob([notesCopyBinary(notes)]);
    await this.db.transaction(async (tx) => {
      const rebuild =
        notes.length >= HNSW_AFTER_LOAD &&
        (await tx.query<{ empty: boolean }>(`select not exists (select 1 from brain_notes) as empty`)).rows[0]!.empty;
      if (rebuild) await tx.exec(`drop index if exists brain_notes_embedding_idx`);
      await tx.query(`copy brain_notes (${COPY_COLUMNS}) from '/dev/blob' with (format binary)`, [], { blob });
      if (rebuild) {
        await tx.exec(
          `set local maintenance_work_mem = '256MB';
           create index if not exists brain_notes_embedding_idx on brain_notes using hnsw (embedding vector_cosine_ops)`,
        );
      }
    });
  }

  async get(id: number): Promise<Note | null> {
    const { rows } = await this.db.query<Row>(`select ${COLUMNS} from brain_notes where id = $1`, [id]);
    return rows[0] ? toNote(rows[0]) : null;
  }

  async getMany(ids: number[]): Promise<Note[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.db.query<Row>(`select ${COLUMNS} from brain_notes where id = any($1::bigint[])`, [ids]);
    const byId = new Map(rows.map((r) => [Number(r.id), toNote(r)]));
    return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  }

  async list(limit: number): Promise<Note[]> {
    const { rows } = await this.db.query<Row>(
      `select ${COLUMNS} from brain_notes order by created_at desc, id desc limit $1`,
      [limit],
    );
    return rows.map(toNote);
  }

  async remove(id: number): Promise<boolean> {
    const result = await this.db.query(`delete from brain_notes where id = $1`, [id]);
    return (result.affectedRows ?? 0) > 0;
  }

  async update(id: number, patch: Parameters<BrainStore["update"]>[1]): Promise<void> {
    const sets: string[] = [];
    const values: unknown[] = [];
    const set = (column: string, value: unknown, cast = "") => {
      values.push(value);
      sets.push(`${column} = $${values.length}${cast}`);
    };
    if (patch.title !== undefined) set("title", patch.title);
    if (patch.tags !== undefined) set("tags", patch.tags);
    if (patch.summary !== undefined) set("summary", patch.summary);
    if (patch.enrichedBy !== undefined) set("enriched_by", patch.enrichedBy);
    if (patch.embeddingModel !== undefined) set("embedding_model", patch.embeddingModel);
    if (patch.embedding !== undefined) set("embedding", vectorText(patch.embedding), "::vector");
    if (sets.length === 0) return;
    values.push(id);
    await this.db.query(`update brain_notes set ${sets.join(", ")} where id = $${values.length}`, values);
  }

  async matchVector(embedding: number[], model: string, count: number, minSimilarity: number): Promise<ScoredId[]> {
    const { rows } = await this.db.query<{ id: number | string; similarity: number }>(
      `select id, similarity from match_notes($1::vector, $2, $3, $4)`,
      [vectorText(embedding), model, count, minSimilarity],
    );
    return rows.map((r) => ({ id: Number(r.id), score: r.similarity }));
  }

  async matchText(query: string, count: number): Promise<ScoredId[]> {
    const { rows } = await this.db.query<{ id: number | string; rank: number }>(
      `select id, rank from search_notes($1, $2)`,
      [query, count],
    );
    return rows.map((r) => ({ id: Number(r.id), score: r.rank }));
  }

  async waitingIds(model: string | null, enrich: boolean): Promise<number[]> {
    const { rows } = await this.db.query<{ id: number | string }>(`select id from brain_waiting($1, $2)`, [
      model,
      enrich,
    ]);
    return rows.map((r) => Number(r.id));
  }

  async counts(currentModel: string | null): Promise<BrainCounts> {
    const { rows } = await this.db.query<CountRow>(`select model, notes, waiting from brain_counts($1)`, [
      currentModel,
    ]);
    return sumCounts(rows);
  }

  async close(): Promise<void> {
    try {
      await this.db.close();
    } finally {
      this.release();
    }
  }
}

/** A directory that exists and holds files but no Postgres cluster is somebody's data: never initialise over it. */
function checkDirectory(dir: string): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) {
    throw new BrainStoreError(
      `The brain database path ${dir} is a file, not a directory. Nothing was changed: move it away, or set PENCIL_HOME to another directory.`,
    );
  }
  const entries = readdirSync(dir);
  if (entries.length > 0 && !entries.includes("PG_VERSION")) {
    throw new BrainStoreError(
      `The brain directory ${dir} holds files but no database (no PG_VERSION). Nothing was changed: restore it from a backup, or move it away to start a new brain.`,
    );
  }
}

/** Brings a freshly opened database to the current schema, or refuses one from a newer Pencil before writing anything. */
async function prepare(db: PGlite, dir: string): Promise<void> {
  // One round trip on every open: the version row, or no brain_meta table at all (a new database).
  let value: string | undefined;
  try {
    value = (await db.query<{ value: string }>(`select value from brain_meta where key = 'schema_version'`)).rows[0]
      ?.value;
  } catch (error) {
    if ((error as { code?: string }).code !== "42P01") throw error; // undefined_table
    await db.exec(SCHEMA_SQL);
    return;
  }
  const found = Number.parseInt(value ?? "", 10);
  if (!Number.isInteger(found))
    throw new BrainStoreError(
      `The brain database in ${dir} has no schema version. Nothing was changed: restore it from a backup, or move it away to start a new brain.`,
    );
  if (found > SCHEMA_VERSION) {
    throw new BrainStoreError(
      `The brain database in ${dir} was written by a newer Pencil (schema version ${found}; this one knows up to ${SCHEMA_VERSION}). Nothing was changed: update Pencil to use it.`,
    );
  }
  if (found < SCHEMA_VERSION) {
    await db.transaction(async (tx) => {
      for (const step of MIGRATIONS.filter((m) => m.version > found)) await tx.exec(step.sql);
      await tx.query(`update brain_meta set value = $1 where key = 'schema_version'`, [String(SCHEMA_VERSION)]);
    });
  }
}

function corrupted(dir: string, error: unknown): BrainStoreError {
  const why = error instanceof Error ? error.message : String(error);
  return new BrainStoreError(
    `The brain database in ${dir} cannot be opened (${why || "the database refused to start"}). It was left as it is: restore it from a backup, or move it away to start a new brain.`,
  );
}
