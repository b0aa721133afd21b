import { DEFAULT_LIMITS } from "../../core/tool-limits.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createRecallTool } from "../../tools/recall.ts";
import { toolsFor } from "../../app/toolbox.ts";
import { Brain } from "../../brain/brain.ts";
import type { PgliteStore } from "../../brain/pglite-store.ts";
import { brainRecall } from "../../brain/recall-search.ts";
import { retrieve } from "../../brain/retrieve.ts";
import { failure, toolContext } from "../support/tool-context.ts";
import { pristineMemoryStore } from "../support/pristine-brain.ts";
import { tempDir } from "../support/temp.ts";

let store: PgliteStore;
beforeAll(async () => {
  store = await pristineMemoryStore();
  const brain = new Brain({ store, embedder: null, chat: null });
  await brain.dump({
    kind: "text",
    source: null,
    content: "Deploy checklist. Run migrations, bump the version, tag the release, then announce in #ops.",
  });
  await brain.dump({ kind: "text", source: null, content: "Lunch ideas: ramen place on 5th street." });
});
afterAll(async () => {
  await store.close();
});

const searchStore = {
  search: async (query: string) => (await retrieve(store, null, query, 5)).notes.map(({ note }) => note),
};

describe("recall", () => {
  test("returns the owner's matching notes with their citations, and records each as read (provenance)", async () => {
    const { ctx, run } = toolContext(tempDir());
    const out = await run(createRecallTool(searchStore), { query: "deploy checklist" });
    expect(out).toContain("1 note(s) of the owner's");
    expect(out).toContain("[#1 Deploy checklist.]");
    expect(out).toContain("tag the release");
    expect(out).not.toContain("ramen");
    expect(ctx.reads.readsSoFar()).toEqual(["brain note #1 (Deploy checklist.)"]);
  });

  test("nothing found, and notes that cannot be searched, are results the model reads", async () => {
    const { run } = toolContext(tempDir());
    expect(await run(createRecallTool(searchStore), { query: "kubernetes quotas" })).toContain(
      'No note of the owner\'s matches "kubernetes quotas"',
    );
    const broken = createRecallTool({ search: async () => Promise.reject(new Error("database locked")) });
    expect((await failure(run(broken, { query: "x" }))).message).toMatch(
      /could not be searched \(database locked\)\. Continue without them/,
    );
  });

  test("with no brain yet, recall finds nothing and creates nothing", async () => {
    const home = join(tempDir(), ".pencil");
    expect(await brainRecall({ PENCIL_HOME: home }).search("anything")).toEqual([]);
    expect(existsSync(join(home, "brain"))).toBe(false);
  });

  test("every mode has recall", () => {
    const runtime = {
      env: {},
      pencilHome: tempDir(),
      settings: { sandbox: { network: false, env: { owner: {}, workspace: {} } }, limits: DEFAULT_LIMITS },
    } as unknown as Parameters<typeof toolsFor>[1];
    for (const mode of ["agent", "plan", "ask"] as const)
      expect(toolsFor(mode, runtime).map((t) => t.name)).toContain("recall");
  });
});
