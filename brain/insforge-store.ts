import { createClient } from "@insforge/sdk";
import type { NewNote, Note } from "./note.ts";
import { COLUMNS, sumCounts, toNote, vectorText, type CountRow, type NoteRow } from "./note-rows.ts";
import type { BrainCounts, BrainStore, ScoredId } from "./store.ts";
import { BrainStoreError } from "../core/errors/brain-store-error.ts";

type Client = ReturnType<typeof createClient>;

/** What the SDK returns: data or an error (it never throws for an HTTP error). */
interface SdkResult<T> {
  data: T | null;
  error: { message?: string; code?: string; details?: string | null; hint?: string | null } | null;
}

/**
 * The hosted store: an InsForge project through the real `@insforge/sdk` (its
 * PostgREST-style records API and `rpc`). The project must have had
 * `brain/schema.sql` applied once (see the README); searches run the same SQL
 * functions as the embedded store.
 */
export class InsforgeStore implements BrainStore {
  private constructor(
    private readonly client: Client,
    readonly label: string,
  ) {}

  /** Connects and checks that the schema is there, with an error that says how to apply it. */
  static async connect(baseUrl: string, anonKey: string, fetchImpl?: typeof fetch): Promise<InsforgeStore> {
    const client = createClient({
      baseUrl,
      anonKey,
      retryCount: 1,
      timeout: 20_000,
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    });
    const store = new InsforgeStore(client, `InsForge (${baseUrl})`);
    const check = (await client.database.from("brain_meta").select("value").eq("key", "schema_version")) as SdkResult<
      { value: string }[]
    >;
    if (check.error) {
      throw new BrainStoreError(
        `The InsForge project at ${baseUrl} has no brain schema, or the anon key cannot reach it (${describe(check.error)}). Apply brain/schema.sql once in the project's SQL editor (see the README, "The second brain").`,
      );
    }
    const version = Number.parseInt(check.data?.[0]?.value ?? "", 10);
    if (version > 1)
      throw new BrainStoreError(
        `The InsForge brain at ${baseUrl} has schema version ${version}, newer than this Pencil knows (1). Update Pencil.`,
      );
    return store;
  }

  async insert(note: NewNote): Promise<Note> {
    const rows = await this.run<NoteRow[]>(
      "store the note",
      this.client.database
        .from("brain_notes")
        .insert([
          {
            kind: note.kind,
            source: note.source,
            content: note.content,
            title: note.title,
            tags: note.tags,
            summary: note.summary,
            enriched_by: note.enrichedBy,
            embedding_model: note.embeddingModel,
            embedding: vectorText(note.embedding),
          },
        ])
        .select(COLUMNS),
    );
    if (!rows[0])
      throw new BrainStoreError(
        "InsForge stored the note but did not return it; check the brain_notes policies of schema.sql.",
      );
    return toNote(rows[0]);
  }

  async get(id: number): Promise<Note | null> {
    const rows = await this.run<NoteRow[]>(
      "read a note",
      this.client.database.from("brain_notes").select(COLUMNS).eq("id", id),
    );
    return rows[0] ? toNote(rows[0]) : null;
  }

  async getMany(ids: number[]): Promise<Note[]> {
    if (ids.length === 0) return [];
    const rows = await this.run<NoteRow[]>(
      "read notes",
      this.client.database.from("brain_notes").select(COLUMNS).in("id", ids),
    );
    const byId = new Map(rows.map((r) => [Number(r.id), toNote(r)]));
    return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  }

  async list(limit: number): Promise<Note[]> {
    const rows = await this.run<NoteRow[]>(
      "list notes",
      this.client.database
        .from("brain_notes")
        .select(COLUMNS)
        .order("created_at", { ascending: false })
        .order("id", { ascending: false })
        .limit(limit),
    );
    return rows.map(toNote);
  }

  async remove(id: number): Promise<boolean> {
    const rows = await this.run<{ id: number }[]>(
      "delete a note",
      this.client.database.from("brain_notes").delete().eq("id", id).select("id"),
    );
    return rows.length > 0;
  }

  async update(id: number, patch: Parameters<BrainStore["update"]>[1]): Promise<void> {
    const row: Record<string, unknown> = {};
    if (patch.title !== undefined) row.title = patch.title;
    if (patch.tags !== undefined) row.tags = patch.tags;
    if (patch.summary !== undefined) row.summary = patch.summary;
    if (patch.enrichedBy !== undefined) row.enriched_by = patch.enrichedBy;
    if (patch.embeddingModel !== undefined) row.embedding_model = patch.embeddingModel;
    if (patch.embedding !== undefined) row.embedding = vectorText(patch.embedding);
    if (Object.keys(row).length === 0) return;
    await this.run("update a note", this.client.database.from("brain_notes").update(row).eq("id", id));
  }

  async matchVector(embedding: number[], model: string, count: number, minSimilarity: number): Promise<ScoredId[]> {
    const rows = await this.run<{ id: number; similarity: number }[]>(
      "search by meaning",
      this.client.database.rpc("match_notes", {
        query_embedding: vectorText(embedding),
        embedding_model: model,
        match_count: count,
        min_similarity: minSimilarity,
      }),
    );
    return rows.map((r) => ({ id: Number(r.id), score: Number(r.similarity) }));
  }

  async matchText(query: string, count: number): Promise<ScoredId[]> {
    const rows = await this.run<{ id: number; rank: number }[]>(
      "search the text",
      this.client.database.rpc("search_notes", { query_text: query, match_count: count }),
    );
    return rows.map((r) => ({ id: Number(r.id), score: Number(r.rank) }));
  }

  async waitingIds(model: string | null, enrich: boolean): Promise<number[]> {
    const rows = await this.run<{ id: number }[]>(
      "find notes to reindex",
      this.client.database.rpc("brain_waiting", { current_model: model, include_unenriched: enrich }),
    );
    return rows.map((r) => Number(r.id));
  }

  async counts(currentModel: string | null): Promise<BrainCounts> {
    return sumCounts(
      await this.run<CountRow[]>(
        "count notes",
        this.client.database.rpc("brain_counts", { current_model: currentModel }),
      ),
    );
  }

  async close(): Promise<void> {
    // HTTP only: nothing held open.
  }

  /** Awaits an SDK call; an error becomes a BrainStoreError naming what failed and where. */
  private async run<T>(what: string, call: PromiseLike<SdkResult<unknown>>): Promise<T> {
    let result: SdkResult<unknown>;
    try {
      result = await call;
    } catch (error) {
      throw new BrainStoreError(
        `Could not ${what} on ${this.label}: ${(error as Error).message}. Check INSFORGE_BASE_URL and the network.`,
      );
    }
    if (result.error) throw new BrainStoreError(`Could not ${what} on ${this.label}: ${describe(result.error)}.`);
    return (result.data ?? []) as T;
  }
}

function describe(error: NonNullable<SdkResult<unknown>["error"]>): string {
  return (
    [error.message, error.code ? `code ${error.code}` : "", error.hint ?? ""].filter(Boolean).join("; ") ||
    "unknown error"
  );
}
