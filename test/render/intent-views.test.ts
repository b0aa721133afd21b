import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { buildChangeset, newChangesetId, type Changeset, type IntentOpinion } from "../../core/staging/changeset.ts";
import { deserialize, serialize } from "../../core/staging/changeset-store.ts";
import { DiskFileOps } from "../../core/file-ops.ts";
import { Overlay } from "../../core/staging/overlay.ts";
import { openWorkspace } from "../../core/workspace.ts";
import { renderCard } from "../../modes/telegram/card-view.ts";
import { htmlToPlain } from "../../modes/telegram/html.ts";
import type { ReviewCard } from "../../modes/telegram/review-cards.ts";
import { pageSummary } from "../../modes/web/page-data.ts";
import { formatSummary } from "../../render/summary.ts";
import { tempDir, writeTree } from "../support/temp.ts";

// The recorded intent opinion as the three views show it: the same one line, said to be the model's view.

function staged(): Changeset {
  const root = tempDir();
  writeTree(root, { "pricing.ts": "export const TAX = 0.1;\n" });
  const overlay = new Overlay(new DiskFileOps());
  overlay.writeBytes(join(root, "pricing.ts"), new TextEncoder().encode("export const TAX = 0.15;\n"), {
    origin: { tool: "edit_file", callId: "c", model: "groq:m", readsBefore: [] },
  });
  return buildChangeset({
    id: newChangesetId(),
    goal: "raise TAX to 0.15",
    workspace: openWorkspace(root),
    staged: overlay.list(),
    readDisk: (real) => readFileSync(real),
  });
}

function withOpinion(cs: Changeset, verdict: IntentOpinion["verdict"], detail: string): Changeset {
  return { ...cs, intent: { verdict, detail, model: "groq:m", digest: cs.digest, goal: cs.goal } };
}

function card(cs: Changeset): ReviewCard {
  return {
    id: "k",
    changesetId: cs.id,
    digest: cs.digest,
    chatId: 1,
    messageId: null,
    files: cs.files.map((f) => ({
      path: f.path,
      digest: f.digest,
      buttons: { diff: "d", approve: "y", reject: "n" },
    })),
    buttons: { approveAll: "a", rejectAll: "r" },
    totalFiles: cs.files.length,
    state: "open",
    outcome: [],
    createdAt: 0,
  };
}

const CASES: [IntentOpinion["verdict"], string, string][] = [
  ["matches", "", "Model's view of intent: matches (groq:m)"],
  ["more", "also renames total", "Model's view of intent: more than asked — also renames total (groq:m)"],
  ["less", "TAX is unchanged", "Model's view of intent: less than asked — TAX is unchanged (groq:m)"],
  ["unchecked", "the model timed out after 8 s", "intent not checked: the model timed out after 8 s (groq:m)"],
];

describe("the intent line in the summary, on the card and on the page", () => {
  test.each(CASES)("%s", (verdict, detail, line) => {
    const cs = withOpinion(staged(), verdict, detail);
    expect(formatSummary(cs, { color: false }).split("\n")).toContain(line);
    expect(htmlToPlain(renderCard(card(cs), cs).html)).toContain(line);
    expect(pageSummary(cs).intent).toEqual({ line, warns: verdict === "more" || verdict === "less" });
  });

  test("no opinion recorded (the check off, or an older changeset): no line anywhere", () => {
    const cs = staged();
    expect(formatSummary(cs, { color: false })).not.toContain("intent");
    expect(htmlToPlain(renderCard(card(cs), cs).html)).not.toContain("intent");
    expect(pageSummary(cs).intent).toBeNull();
  });

  test("the model's words cannot drive the terminal or the card's HTML", () => {
    const cs = withOpinion(staged(), "more", "also adds \u001b[2J<b>bold</b>");
    expect(formatSummary(cs, { color: false })).not.toContain("\u001b[2J");
    expect(renderCard(card(cs), cs).html).toContain("&lt;b&gt;bold&lt;/b&gt;");
  });

  test("recorded with the changeset: it survives the store; one of another shape is dropped and the changeset still loads", () => {
    const cs = withOpinion(staged(), "less", "TAX is unchanged");
    expect(deserialize(serialize(cs)).intent).toEqual(cs.intent!);
    const damaged = JSON.parse(serialize(cs));
    damaged.intent = { verdict: "probably", detail: 3 };
    const loaded = deserialize(JSON.stringify(damaged));
    expect(loaded.intent).toBeUndefined();
    expect(loaded.files).toHaveLength(1);
  });
});
