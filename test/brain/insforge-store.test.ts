import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Brain } from "../../brain/brain.ts";
import { embedderFromEnv } from "../../brain/embedder.ts";
import { InsforgeStore } from "../../brain/insforge-store.ts";
import { openStore } from "../../brain/open-brain.ts";
import { startFakeEmbeddingServer, type FakeEmbeddingServer } from "../support/fake-embedding-server.ts";
import { startFakeInsforge, type FakeInsforge } from "../support/fake-insforge-server.ts";

let insforge: FakeInsforge;
let embeddings: FakeEmbeddingServer;
beforeAll(async () => {
  [insforge, embeddings] = await Promise.all([startFakeInsforge(), startFakeEmbeddingServer()]);
});
afterAll(async () => {
  await Promise.all([insforge.stop(), embeddings.stop()]);
});

describe("the InsForge store, through the real @insforge/sdk", () => {
  test("INSFORGE_* select it; dump, list, show, ask (vector via rpc match_notes, text via search_notes), reindex, forget", async () => {
    const store = await openStore({ INSFORGE_BASE_URL: insforge.url, INSFORGE_ANON_KEY: insforge.anonKey });
    expect(store).toBeInstanceOf(InsforgeStore);
    expect(store.label).toBe(`InsForge (${insforge.url})`);
    const embedder = embedderFromEnv({
      PENCIL_EMBED_MODEL: "local:nomic-embed-text",
      LOCAL_LLM_BASE_URL: `${embeddings.url}/v1`,
    });
    const brain = new Brain({ store, embedder, chat: null });
    const boiler = await brain.dump({ kind: "text", source: null, content: "The boiler service code is BX-4471." });
    const wifi = await brain.dump({ kind: "text", source: null, content: "Guest wifi password: tulip-42." });
    expect(boiler.note).toMatchObject({
      id: 1,
      kind: "text",
      enrichedBy: "scripted",
      embeddingModel: "local:nomic-embed-text",
    });
    expect((await store.list(10)).map((n) => n.id)).toEqual([wifi.note.id, boiler.note.id]);
    expect((await store.get(boiler.note.id))?.content).toBe("The boiler service code is BX-4471.");
    expect((await store.getMany([wifi.note.id, 999, boiler.note.id])).map((n) => n.id)).toEqual([
      wifi.note.id,
      boiler.note.id,
    ]);

    const asked = await brain.ask("boiler service code");
    expect(asked.mode).toBe("hybrid");
    expect(asked.retrieved[0]).toMatchObject({ note: { id: boiler.note.id }, textMatch: true });
    expect(asked.retrieved[0]!.similarity).toBeGreaterThan(0.55);
    expect(insforge.requests.some((r) => r.startsWith("POST /api/database/rpc/match_notes"))).toBe(true);
    expect(insforge.requests.some((r) => r.startsWith("POST /api/database/rpc/search_notes"))).toBe(true);

    // Another model: never compared with the stored vectors; reindex moves them over.
    const other = new Brain({
      store,
      embedder: embedderFromEnv({
        PENCIL_EMBED_MODEL: "local:mxbai-embed-large",
        LOCAL_LLM_BASE_URL: `${embeddings.url}/v1`,
      }),
      chat: null,
    });
    expect((await other.ask("boiler service code")).retrieved[0]!.similarity).toBeUndefined();
    expect(await store.counts("local:mxbai-embed-large")).toMatchObject({
      notes: 2,
      waiting: 2,
      byModel: { "local:nomic-embed-text": 2 },
    });
    expect(await other.reindex()).toMatchObject({ embedded: 2, failed: [] });
    expect((await other.ask("boiler service code")).retrieved[0]!.similarity).toBeGreaterThan(0.55);

    expect(await store.remove(wifi.note.id)).toBe(true);
    expect(await store.remove(wifi.note.id)).toBe(false);
    expect(await store.get(wifi.note.id)).toBeNull();
  }, 30_000);

  test("a wrong key, and a project without the schema, fail with what to do", async () => {
    await expect(InsforgeStore.connect(insforge.url, "wrong-key")).rejects.toThrow(
      /no brain schema, or the anon key cannot reach it.*Apply brain\/schema\.sql/,
    );
    const empty = await startFakeInsforge({ schema: false });
    try {
      await expect(InsforgeStore.connect(empty.url, empty.anonKey)).rejects.toThrow(/no brain schema/);
    } finally {
      await empty.stop();
    }
    await expect(openStore({ INSFORGE_BASE_URL: insforge.url })).rejects.toThrow(
      /needs both INSFORGE_BASE_URL and INSFORGE_ANON_KEY/,
    );
  }, 30_000);

  test("the anon role reaches the brain's table and functions through schema.sql's grants, nothing else", async () => {
    await insforge.db.exec("create table private_stuff (x int); insert into private_stuff values (1);");
    const response = await fetch(`${insforge.url}/api/database/records/private_stuff?select=x`, {
      headers: { authorization: `Bearer ${insforge.anonKey}` },
    });
    expect(response.status).toBe(403);
  });
});

const live = process.env.INSFORGE_BASE_URL && process.env.INSFORGE_ANON_KEY && process.env.PENCIL_LIVE === "1";
describe.skipIf(!live)("live InsForge smoke (PENCIL_LIVE=1 with INSFORGE_BASE_URL and INSFORGE_ANON_KEY)", () => {
  test("stores, finds and forgets a note in the real project", async () => {
    const store = await openStore(process.env);
    const brain = new Brain({ store, embedder: null, chat: null });
    const marker = `pencil-smoke-${Date.now()}`;
    const { note } = await brain.dump({ kind: "text", source: null, content: `Live smoke note ${marker}` });
    expect((await brain.ask(marker)).retrieved.map((r) => r.note.id)).toContain(note.id);
    expect(await store.remove(note.id)).toBe(true);
  }, 60_000);
});
if (!live)
  console.log(
    "[skipped] live InsForge smoke: set PENCIL_LIVE=1, INSFORGE_BASE_URL and INSFORGE_ANON_KEY to run it against a real project.",
  );
