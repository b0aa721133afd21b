import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite/vector";
import type { NewNote } from "../../brain/note.ts";
import { vectorText } from "../../brain/note-rows.ts";
import { HNSW_AFTER_LOAD, PgliteStore } from "../../brain/pglite-store.ts";
import { pristineMemoryStore } from "../support/pristine-brain.ts";
import { tempDir } from "../support/temp.ts";

function note(content: string, extra: Partial<NewNote> = {}): NewNote {
  return {
    kind: "text",
    source: null,
    content,
    title: content.slice(0, 30),
    tags: [],
    summary: "",
    enrichedBy: null,
    embeddingModel: null,
    embedding: null,
    ...extra,
  };
}

describe("the embedded store (real PGlite with pgvector)", () => {
  let store: PgliteStore;
  beforeAll(async () => {
    store = await PgliteStore.inMemory();
  });
  afterAll(async () => {
    await store.close();
  });

  test("stores, lists, shows, updates and forgets notes", async () => {
    const a = await store.insert(note("The boiler service code is BX-4471.", { tags: ["home", "boiler"] }));
    const b = await store.insert(note("Buy oat milk and coffee beans."));
    expect(a.id).toBeGreaterThan(0);
    expect((await store.get(a.id))?.tags).toEqual(["home", "boiler"]);
    expect((await store.list(10)).map((n) => n.id)).toEqual([b.id, a.id]);
    await store.update(b.id, {
      title: "Shopping",
      tags: ["errands"],
      summary: "Two things to buy.",
      enrichedBy: "groq:x",
    });
    expect(await store.get(b.id)).toMatchObject({ title: "Shopping", tags: ["errands"], enrichedBy: "groq:x" });
    expect(await store.remove(b.id)).toBe(true);
    expect(await store.remove(b.id)).toBe(false);
    expect(await store.get(b.id)).toBeNull();
  });

  test("full-text search matches any word of a question, title first", async () => {
    const hit = await store.insert(note("Wifi password for the guest network is tulip-42.", { title: "Guest wifi" }));
    await store.insert(note("Lunch with Sam on Friday."));
    const found = await store.matchText("what is the guest wifi password?", 8);
    expect(found[0]?.id).toBe(hit.id);
    expect(await store.matchText("the of and", 8)).toEqual([]);
  });

  test("vectors of different embedding models are never compared", async () => {
    const m1 = await store.insert(note("alpha", { embeddingModel: "local:one", embedding: [1, 0, 0] }));
    const m2 = await store.insert(note("beta", { embeddingModel: "local:two", embedding: [1, 0, 0] }));
    expect((await store.matchVector([1, 0, 0], "local:one", 8, 0.5)).map((s) => s.id)).toEqual([m1.id]);
    expect((await store.matchVector([1, 0, 0], "local:two", 8, 0.5)).map((s) => s.id)).toEqual([m2.id]);
    expect(await store.matchVector([0, 1, 0], "local:one", 8, 0.5)).toEqual([]);
    expect(await store.waitingIds("local:one", false)).toContain(m2.id);
    expect(await store.waitingIds("local:one", false)).not.toContain(m1.id);
  });

  test("a vector wider than the column is refused with the limit named", async () => {
    await expect(
      store.insert(note("x", { embeddingModel: "m", embedding: new Array(2000).fill(0.1) })),
    ).rejects.toThrow(/at most 1536/);
  });
});

describe("insertMany (binary COPY)", () => {
  test("stores each note as one row, exactly as insert does: text, tags, nulls, model and zero-padded vector", async () => {
    const store = await pristineMemoryStore();
    try {
      const many = [
        note("ünïcode ✓ café\ttab\nline", {
          tags: ["a b", "ü", ""],
          source: "https://x.test/p",
          enrichedBy: "groq:x",
          embeddingModel: "local:one",
          embedding: [0.25, -1.5, 3],
        }),
        note("no vector, no tags"),
      ];
      await store.insertMany(many);
      const one = await store.insert(many[0]!);
      const rows = (await store.list(10)).reverse();
      expect(rows.length).toBe(3);
      const strip = ({ id: _id, createdAt: _c, ...rest }: (typeof rows)[number]) => rest;
      expect(strip(rows[0]!)).toEqual(strip(one));
      expect(strip(rows[1]!)).toMatchObject({
        content: "no vector, no tags",
        tags: [],
        source: null,
        embeddingModel: null,
        enrichedBy: null,
      });
      const vectors = (
        await store.database.query<{ v: string | null }>(`select embedding::text as v from brain_notes order by id`)
      ).rows;
      expect(vectors[0]!.v).toBe(vectors[2]!.v);
      expect(vectors[0]!.v!.startsWith("[0.25,-1.5,3,0,0,")).toBe(true);
      expect(vectors[1]!.v).toBeNull();
      expect((await store.matchVector([0.25, -1.5, 3], "local:one", 8, 0.99)).length).toBe(2);
      await expect(
        store.insertMany([note("x", { embeddingModel: "m", embedding: new Array(2000).fill(0.1) })]),
      ).rejects.toThrow(/at most 1536/);
      expect((await store.list(10)).length).toBe(3);
    } finally {
      await store.close();
    }
  });

  test("a large load into an empty table builds the HNSW index after the rows; searches use it", async () => {
    const store = await pristineMemoryStore();
    try {
      const notes = Array.from({ length: HNSW_AFTER_LOAD }, (_, i) =>
        note(`note ${i}`, { embeddingModel: "local:one", embedding: [Math.cos(i), Math.sin(i), i % 7] }),
      );
      await store.insertMany(notes);
      const indexes = (
        await store.database.query<{ indexname: string }>(
          `select indexname from pg_indexes where tablename = 'brain_notes'`,
        )
      ).rows.map((r) => r.indexname);
      expect(indexes).toContain("brain_notes_embedding_idx");
      const plan = (
        await store.database.query<{ "QUERY PLAN": string }>(
          `explain select id from brain_notes order by embedding <=> '${vectorText([1, 0, 0])}'::vector limit 8`,
        )
      ).rows
        .map((r) => r["QUERY PLAN"])
        .join("\n");
      expect(plan).toContain("brain_notes_embedding_idx");
      expect((await store.matchVector([Math.cos(5), Math.sin(5), 5], "local:one", 1, 0))[0]?.id).toBe(6);
      expect((await store.counts(null)).notes).toBe(HNSW_AFTER_LOAD);
    } finally {
      await store.close();
    }
  }, 60_000);
});

describe("the brain directory", () => {
  test("notes survive a reopen; a second process is refused while one holds it; a newer or damaged database is refused untouched", async () => {
    const dir = join(tempDir(), "brain");
    const first = await PgliteStore.open(dir);
    const saved = await first.insert(note("kept across restarts"));
    await expect(PgliteStore.open(dir, { lockWaitMs: 100 })).rejects.toThrow(/in use by another Pencil process/);
    await first.close();
    const again = await PgliteStore.open(dir);
    expect((await again.get(saved.id))?.content).toBe("kept across restarts");
    await again.database.query(`update brain_meta set value = '99' where key = 'schema_version'`);
    await again.close();
    await expect(PgliteStore.open(dir)).rejects.toThrow(/newer Pencil \(schema version 99; this one knows up to 1\)/);
    // Nothing was touched: the note and the version are as they were.
    const raw = await PGlite.create({ dataDir: dir, extensions: { vector } });
    expect((await raw.query<{ value: string }>(`select value from brain_meta`)).rows[0]?.value).toBe("99");
    expect((await raw.query(`select 1 from brain_notes where id = $1`, [saved.id])).rows.length).toBe(1);
    await raw.close();

    // Damaged: refused with its directory named, and left as it is.
    writeFileSync(join(dir, "global", "pg_control"), "garbage");
    await expect(PgliteStore.open(dir)).rejects.toThrow(`The brain database in ${dir} cannot be opened`);
    expect(readFileSync(join(dir, "global", "pg_control"), "utf8")).toBe("garbage");
    expect(existsSync(`${dir}.lock`)).toBe(false);
  }, 30_000);

  test("a directory of other files is never initialised over", async () => {
    const dir = join(tempDir(), "brain");
    mkdirSync(dir);
    writeFileSync(join(dir, "notes.txt"), "precious");
    await expect(PgliteStore.open(dir)).rejects.toThrow(`The brain directory ${dir} holds files but no database`);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("precious");
    expect(existsSync(join(dir, "PG_VERSION"))).toBe(false);
  });
});
