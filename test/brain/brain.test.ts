import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Brain } from "../../brain/brain.ts";
import { embedderFromEnv } from "../../brain/embedder.ts";
import { chatFromEnv } from "../../brain/chat-from-env.ts";
import type { PgliteStore } from "../../brain/pglite-store.ts";
import { errorReply, startFakeOpenAIServer, textReply, type FakeOpenAIServer } from "../support/fake-openai-server.ts";
import { fakeVector, startFakeEmbeddingServer, type FakeEmbeddingServer } from "../support/fake-embedding-server.ts";
import { DumpRefused } from "../../core/errors/dump-refused.ts";
import { pristineMemoryStore } from "../support/pristine-brain.ts";

let store: PgliteStore;
let llm: FakeOpenAIServer;
let embeddings: FakeEmbeddingServer;

beforeAll(async () => {
  [store, llm, embeddings] = await Promise.all([
    pristineMemoryStore(),
    startFakeOpenAIServer(),
    startFakeEmbeddingServer(),
  ]);
});
afterAll(async () => {
  await Promise.all([store.close(), llm.stop(), embeddings.stop()]);
});
beforeEach(async () => {
  llm.requests.length = 0;
  embeddings.requests.length = 0;
});

const groqEnv = () => ({ GROQ_API_KEY: "gsk-test", GROQ_BASE_URL: `${llm.url}/openai/v1` });
const geminiEnv = () => ({ GEMINI_API_KEY: "gemini-test", GEMINI_BASE_URL: `${embeddings.url}/v1beta` });
const localEmbedEnv = (name = "nomic-embed-text") => ({
  PENCIL_EMBED_MODEL: `local:${name}`,
  LOCAL_LLM_BASE_URL: `${embeddings.url}/v1`,
});

function enrichment(title: string, tags: string[], summary: string): string {
  return JSON.stringify({ title, tags, summary });
}

/** 200 notes that all look alike: service codes of other appliances, stored with the same embedding model. */
async function similarNotes(model: string): Promise<void> {
  const things = [
    "dishwasher",
    "washing machine",
    "fridge",
    "oven",
    "dryer",
    "heat pump",
    "water softener",
    "car",
    "bike",
    "alarm",
  ];
  const notes = Array.from({ length: 200 }, (_, i) => {
    const thing = things[i % things.length]!;
    const content = `The ${thing} service code for unit ${i} is ${thing.slice(0, 2).toUpperCase()}-${1000 + i}. Call the engineer on weekdays.`;
    return {
      kind: "text" as const,
      source: null,
      content,
      title: `${thing} service code ${i}`,
      tags: ["service", thing.split(" ")[0]!],
      summary: `The service code of the ${thing}.`,
      enrichedBy: "groq:test",
      embeddingModel: model,
      embedding: fakeVector(
        `${thing} service code ${i}\nThe service code of the ${thing}.\n\n${content}`,
        model.split(":")[1]!,
        model.startsWith("gemini") ? 1536 : 768,
      ),
    };
  });
  await store.insertMany(notes);
}

describe("dump then ask", () => {
  beforeAll(async () => {
    await store.database.exec("truncate brain_notes restart identity");
    await similarNotes("gemini:gemini-embedding-001");
  }, 120_000);
  beforeEach(async () => {
    await store.database.exec("delete from brain_notes where id > 200");
  });

  test("finds and cites the right note among 200 similar ones (Gemini embeddings, Groq chat)", async () => {
    const brain = new Brain({ store, embedder: embedderFromEnv(geminiEnv()), chat: chatFromEnv(groqEnv()) });
    llm.enqueue(
      textReply(
        enrichment("Boiler service code", ["home", "boiler"], "The boiler's service code. The engineer needs it."),
      ),
    );
    const dumped = await brain.dump({
      kind: "text",
      source: null,
      content: "Boiler: the service code is BX-4471, the engineer asks for it when booking the annual check.",
    });
    expect(dumped).toMatchObject({ enrichment: "model", embeddedWith: "gemini:gemini-embedding-001" });
    expect(dumped.note).toMatchObject({
      title: "Boiler service code",
      tags: ["home", "boiler"],
      enrichedBy: "groq:openai/gpt-oss-120b",
    });
    // The document was embedded at 1,536 dimensions, as a document.
    expect(embeddings.requests.at(-1)).toMatchObject({
      protocol: "gemini",
      model: "gemini-embedding-001",
      dimensions: 1536,
      taskType: "RETRIEVAL_DOCUMENT",
      authorization: "gemini-test",
    });

    const id = dumped.note.id;
    llm.enqueue(textReply(`The boiler service code is BX-4471 [#${id} Boiler service code]. Also [#99999 Made up].`));
    const result = await brain.ask("what was the boiler service code?");
    expect(embeddings.requests.at(-1)).toMatchObject({
      taskType: "RETRIEVAL_QUERY",
      inputs: ["what was the boiler service code?"],
    });
    expect(result.mode).toBe("hybrid");
    expect(result.retrieved[0]?.note.id).toBe(id);
    expect(result.retrieved.length).toBeLessThanOrEqual(8);
    expect(result.outcome).toBe("answered");
    expect(result.cited.map((n) => n.id)).toEqual([id]); // the invented #99999 is no source
    // The model was given the notes, the right one first, labelled as it must cite them, and told to use nothing else.
    const sent = JSON.stringify(llm.requests.at(-1)!.body.messages);
    expect(sent).toContain(`[#${id} Boiler service code]`);
    expect(sent.indexOf("BX-4471")).toBeLessThan(sent.indexOf("service code for unit"));
    expect(sent).toContain("only from them");
  });

  test("nothing relevant stored: says so, and no model is asked to invent an answer", async () => {
    const brain = new Brain({ store, embedder: embedderFromEnv(geminiEnv()), chat: chatFromEnv(groqEnv()) });
    const result = await brain.ask("who painted the Sistine chapel ceiling?");
    expect(result.outcome).toBe("nothing");
    expect(result.answer).toMatch(/Nothing relevant is stored/);
    expect(result.retrieved).toEqual([]);
    expect(llm.requests).toHaveLength(0);
  });

  test("the model finding nothing in the notes is reported as nothing, without sources", async () => {
    const brain = new Brain({ store, embedder: embedderFromEnv(geminiEnv()), chat: chatFromEnv(groqEnv()) });
    llm.enqueue(textReply("Nothing in your notes answers that."));
    const result = await brain.ask("when is the dishwasher warranty over?");
    expect(result.retrieved.length).toBeGreaterThan(0);
    expect(result).toMatchObject({ outcome: "nothing", cited: [] });
  });
});

describe("embedding models", () => {
  beforeEach(async () => {
    await store.database.exec("truncate brain_notes restart identity");
  });

  test("vectors of two models are never compared; reindex re-embeds with the current one", async () => {
    const local = new Brain({ store, embedder: embedderFromEnv(localEmbedEnv()), chat: null });
    const old = await local.dump({
      kind: "text",
      source: null,
      content: "Passport renewal: the appointment is on 14 May at the town hall.",
    });
    expect(old.embeddedWith).toBe("local:nomic-embed-text");
    expect(embeddings.requests.at(-1)).toMatchObject({ protocol: "openai", model: "nomic-embed-text" });

    const gemini = new Brain({ store, embedder: embedderFromEnv(geminiEnv()), chat: null });
    // Same text, other model: the vector search must not see the old note (it has no gemini vector); full text still does.
    const before = await gemini.ask("passport appointment town hall");
    expect(before.retrieved.map((r) => r.note.id)).toEqual([old.note.id]);
    expect(before.retrieved[0]!.similarity).toBeUndefined();
    expect(before.retrieved[0]!.textMatch).toBe(true);
    expect(
      await store.matchVector(
        fakeVector("passport appointment town hall", "gemini-embedding-001", 1536),
        "gemini:gemini-embedding-001",
        8,
        0,
      ),
    ).toEqual([]);

    const counts = await store.counts("gemini:gemini-embedding-001");
    expect(counts).toMatchObject({ notes: 1, byModel: { "local:nomic-embed-text": 1 } });
    const result = await gemini.reindex();
    expect(result).toMatchObject({ embedded: 1, failed: [] });
    expect((await store.get(old.note.id))?.embeddingModel).toBe("gemini:gemini-embedding-001");
    const after = await gemini.ask("passport appointment town hall");
    expect(after.retrieved[0]!.similarity).toBeGreaterThan(0.55);
    // Nothing of the local model remains to be compared.
    expect(
      await store.matchVector(
        fakeVector("passport appointment", "nomic-embed-text", 768),
        "local:nomic-embed-text",
        8,
        0,
      ),
    ).toEqual([]);
  });

  test("PENCIL_EMBED_MODEL is checked: malformed, or missing its key", () => {
    expect(() => embedderFromEnv({ PENCIL_EMBED_MODEL: "nomic" })).toThrow(
      /gemini:NAME, openrouter:NAME or local:NAME/,
    );
    expect(() => embedderFromEnv({ PENCIL_EMBED_MODEL: "gemini:gemini-embedding-001" })).toThrow(
      /needs GEMINI_API_KEY/,
    );
    expect(embedderFromEnv({})).toBeNull();
    expect(embedderFromEnv({ OPENROUTER_API_KEY: "k" })?.label).toBe("openrouter:openai/text-embedding-3-small");
    expect(embedderFromEnv({ OPENROUTER_API_KEY: "k", GEMINI_API_KEY: "g" })?.label).toBe(
      "gemini:gemini-embedding-001",
    );
  });

  test("OpenRouter embeddings are the fallback when Gemini has no key", async () => {
    const brain = new Brain({
      store,
      embedder: embedderFromEnv({ OPENROUTER_API_KEY: "or-key", OPENROUTER_BASE_URL: `${embeddings.url}/api/v1` }),
      chat: null,
    });
    const dumped = await brain.dump({ kind: "text", source: null, content: "Bike lock combination is 3-9-1-7." });
    expect(dumped.embeddedWith).toBe("openrouter:openai/text-embedding-3-small");
    expect(embeddings.requests.at(-1)).toMatchObject({
      protocol: "openai",
      model: "openai/text-embedding-3-small",
      authorization: "Bearer or-key",
    });
  });

  test("a long note is cut into pieces for embedding and stays one note", async () => {
    const brain = new Brain({ store, embedder: embedderFromEnv(localEmbedEnv()), chat: null });
    const long = Array.from(
      { length: 3000 },
      (_, i) => `Paragraph ${i} of the tenancy agreement about rent and repairs.`,
    ).join("\n\n");
    const dumped = await brain.dump({ kind: "text", source: null, content: long });
    const request = embeddings.requests.at(-1)!;
    expect(request.inputs.length).toBeGreaterThan(1);
    expect(request.inputs.every((piece) => piece.length <= 4000)).toBe(true);
    expect((await store.list(10)).map((n) => n.id)).toEqual([dumped.note.id]);
  });
});

describe("without models, and with models that fail", () => {
  beforeEach(async () => {
    await store.database.exec("truncate brain_notes restart identity");
  });

  test("full-text-only: no embedder, no chat model — stored with scripted fields, found, listed without an invented answer", async () => {
    const brain = new Brain({ store, embedder: null, chat: null });
    const dumped = await brain.dump({
      kind: "text",
      source: null,
      content: "Gate code for grandma's building is 5521#. Ring twice.",
    });
    expect(dumped).toMatchObject({ enrichment: "scripted", embeddedWith: null });
    expect(dumped.note.enrichedBy).toBe("scripted");
    expect(dumped.note.tags.length).toBeGreaterThanOrEqual(1);
    await brain.dump({ kind: "text", source: null, content: "Oat milk, coffee beans, lemons." });
    const result = await brain.ask("what is the gate code at grandma's?");
    expect(result).toMatchObject({ outcome: "no-model", mode: "full-text" });
    expect(result.retrieved.map((r) => r.note.id)).toEqual([dumped.note.id]);
    expect(result.answer).toContain(`[#${dumped.note.id} `);
  });

  test("a chat model that is down or answers junk loses nothing: stored raw, enriched by reindex", async () => {
    const brain = new Brain({ store, embedder: null, chat: chatFromEnv(groqEnv()) });
    llm.enqueue(errorReply(503, "over capacity"));
    const down = await brain.dump({
      kind: "text",
      source: null,
      content: "Dentist: Dr. Okafor, 2 Elm Street, check-up every six months.",
    });
    expect(down).toMatchObject({ enrichment: "failed" });
    expect(down.note.enrichedBy).toBeNull();
    expect(down.note.content).toContain("Dr. Okafor");
    llm.enqueue(textReply('Sure! Here is a title: "Dentist"'));
    const junk = await brain.dump({
      kind: "text",
      source: null,
      content: "Car insurance renews on 3 April; policy AX-77.",
    });
    expect(junk.enrichment).toBe("failed");
    expect(junk.enrichError).toMatch(/no JSON object/);
    llm.enqueue(textReply(enrichment("x", [], "y")));
    const badTags = await brain.dump({
      kind: "text",
      source: null,
      content: "Plant watering: fern weekly, cactus monthly.",
    });
    expect(badTags.enrichError).toMatch(/tags/);
    expect(await store.waitingIds(null, true)).toEqual([down.note.id, junk.note.id, badTags.note.id]);

    llm.enqueue(
      textReply(enrichment("Dentist", ["health"], "Dr. Okafor is the dentist. Check-ups every six months.")),
      textReply(enrichment("Car insurance", ["car", "insurance"], "Renews 3 April. Policy AX-77.")),
      textReply(enrichment("Watering plants", ["plants"], "How often to water. Fern weekly.")),
    );
    expect(await brain.reindex()).toMatchObject({ enriched: 3, failed: [] });
    expect(await store.get(down.note.id)).toMatchObject({ title: "Dentist", enrichedBy: "groq:openai/gpt-oss-120b" });
    expect(await store.waitingIds(null, true)).toEqual([]);
  });

  test("an embedding provider that is down: the note is stored without a vector and found by full text until reindex", async () => {
    const brain = new Brain({ store, embedder: embedderFromEnv(localEmbedEnv()), chat: null });
    embeddings.failNext(10);
    const dumped = await brain.dump({
      kind: "text",
      source: null,
      content: "Spare house key is with the neighbour at number 12.",
    });
    expect(dumped.embeddedWith).toBeNull();
    expect(dumped.embedError).toMatch(/local:nomic-embed-text/);
    const asked = await brain.ask("where is the spare house key?");
    expect(asked).toMatchObject({ mode: "full-text" });
    expect(asked.vectorError).toMatch(/local:nomic-embed-text/);
    expect(asked.retrieved[0]?.note.id).toBe(dumped.note.id);
    embeddings.failNext(0);
    expect(await brain.reindex()).toMatchObject({ embedded: 1, failed: [] });
    expect((await brain.ask("where is the spare house key?")).mode).toBe("hybrid");
  });

  test("bad input is refused before anything is stored", async () => {
    const brain = new Brain({ store, embedder: null, chat: null });
    await expect(brain.dump({ kind: "text", source: null, content: " \n\t " })).rejects.toThrow(DumpRefused);
    await expect(brain.dump({ kind: "text", source: null, content: "x".repeat(5 * 1024 * 1024) })).rejects.toThrow(
      /at most 1 MB/,
    );
    expect(await store.list(5)).toEqual([]);
    const empty = await brain.ask("anything at all?");
    expect(empty.outcome).toBe("nothing");
  });
});
