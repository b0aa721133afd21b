import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ScriptedModel } from "../../ai/scripted-model.ts";
import { checkIntent, intentPrompt } from "../../app/intent-check.ts";
import { buildChangeset, newChangesetId, type Changeset } from "../../core/staging/changeset.ts";
import { DiskFileOps } from "../../core/file-ops.ts";
import { Overlay } from "../../core/staging/overlay.ts";
import { openWorkspace } from "../../core/workspace.ts";
import { intentLine } from "../../render/intent-line.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const enc = (s: string) => new TextEncoder().encode(s);

/** A changeset of real staged files in a temporary workspace. */
function changeset(files: Record<string, string>, goal = "raise the tax rate to 0.2"): Changeset {
  const root = tempDir();
  writeTree(root, { "pricing.ts": "export const TAX = 0.1;\nexport const total = (n: number) => n * (1 + TAX);\n" });
  const overlay = new Overlay(new DiskFileOps());
  for (const [path, text] of Object.entries(files))
    overlay.writeBytes(join(root, path), enc(text), {
      origin: { tool: "edit_file", callId: "c", model: "scripted:t", readsBefore: [] },
    });
  return buildChangeset({
    id: newChangesetId(),
    goal,
    workspace: openWorkspace(root),
    staged: overlay.list(),
    readDisk: (real) => {
      try {
        return readFileSync(real);
      } catch {
        return null;
      }
    },
  });
}

const HARD_CODED = {
  "pricing.ts": "export const TAX = 0.1;\nexport const total = (n: number) => n * (1 + 0.15);\n",
};

describe("checkIntent: one structured call, zod-checked, bounded in time", () => {
  test("matches, more and less become the opinion recorded, with the model that gave it", async () => {
    const cs = changeset(HARD_CODED);
    const model = new ScriptedModel([], {
      name: "judge",
      structured: [
        { json: { verdict: "matches", what: "" } },
        { json: { verdict: "more than asked", what: "also renames total to grandTotal" } },
        { json: { verdict: "less than asked", what: "TAX is unchanged; 0.15 is hard-coded in total" } },
      ],
    });
    const results = [];
    for (let i = 0; i < 3; i++)
      results.push(await checkIntent({ changeset: cs, model, label: model.label, timeoutMs: 5000 }));
    expect(results.map((r) => intentLine(r.opinion))).toEqual([
      "Model's view of intent: matches (scripted:judge)",
      "Model's view of intent: more than asked — also renames total to grandTotal (scripted:judge)",
      "Model's view of intent: less than asked — TAX is unchanged; 0.15 is hard-coded in total (scripted:judge)",
    ]);
    expect(results[0]!.opinion).toMatchObject({ digest: cs.digest, goal: cs.goal, model: "scripted:judge" });
    // Tokens are counted for the run's cost; the script's turns are untouched.
    expect(results[0]!.usage!.inputTokens).toBeGreaterThan(0);
    expect(model.calls).toHaveLength(0);
    expect(model.structuredCalls).toHaveLength(3);
    // The call asked for JSON and carried the goal and the diff.
    const sent = JSON.stringify(model.structuredCalls[0]!.prompt);
    expect(sent).toContain("raise the tax rate to 0.2");
    expect(sent).toContain("(1 + 0.15)");
  });

  test("a junk answer, a thrown error and a timeout each say so, and nothing throws", async () => {
    const cs = changeset(HARD_CODED);
    const model = new ScriptedModel([], {
      structured: [
        { text: "I think it is fine!" },
        { json: { verdict: "probably", what: 3 } },
        { error: "HTTP 503: upstream overloaded" },
        { json: { verdict: "matches", what: "" }, delayMs: 5000 },
      ],
    });
    const ask = (timeoutMs = 5000) => checkIntent({ changeset: cs, model, label: model.label, timeoutMs });
    const junk = await ask();
    expect(intentLine(junk.opinion)).toBe("intent not checked: the model's answer was not a verdict (scripted:demo)");
    const wrongShape = await ask();
    expect(wrongShape.opinion).toMatchObject({ verdict: "unchecked", detail: "the model's answer was not a verdict" });
    const failed = await ask();
    expect(failed.opinion.detail).toBe("the model failed: HTTP 503: upstream overloaded");
    const started = performance.now();
    const late = await ask(300);
    expect(intentLine(late.opinion)).toBe("intent not checked: the model timed out after 0.3 s (scripted:demo)");
    expect(performance.now() - started).toBeLessThan(2000);
  });

  test("the diff is bounded: the prompt says which files were cut or left out", () => {
    const big = Array.from({ length: 400 }, (_, i) => `export const line${i} = ${i};`).join("\n");
    const cs = changeset({ "a.ts": big, "b.ts": big, "c.ts": "export const c = 1;\n" }, "add constants");
    const prompt = intentPrompt(cs, 6000);
    expect(prompt.length).toBeLessThan(8000);
    expect(prompt).toContain(
      "The diff was cut to fit 6,000 characters: 0 of 3 files are shown whole, a.ts is shown in part",
    );
    expect(prompt).toContain("2 are not shown: b.ts (create, +400 -0), c.ts (create, +1 -0)");
    expect(prompt).toMatch(/\[… the rest of this file's diff is cut: \d+ more lines\]/);
    // Within the budget nothing is said to be cut.
    expect(intentPrompt(cs, 100_000)).not.toContain("was cut");
    // Preparing the diff is bounded in time too: what is not ready is named like what does not fit.
    expect(intentPrompt(cs, 100_000, -1)).toContain(
      "The diff was cut short (it is prepared within a second): 0 of 3 files are shown whole, and 3 are not shown: a.ts (create, +400 -0)",
    );
  });
});
