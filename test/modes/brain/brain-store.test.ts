import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite/vector";
import type { NewNote } from "../../../modes/brain/note.ts";
import { PgliteStore } from "../../../modes/brain/pglite-store.ts";
import { tempDir } from "../../support/temp.ts";

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
