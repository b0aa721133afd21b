import { describe, expect, test } from "bun:test";
import { structuredPatch } from "diff";
import { hunkLabel, rawLines, rebuildWithHunks, splitHunks } from "../../../core/staging/hunks.ts";

// Splitting a change into hunks and rebuilding the base with a chosen set of them, byte for byte.

const lines = (n: number, tag = "line") => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}\n`).join("");

/** Every subset of `n` hunk indices. */
function subsets(n: number): Set<number>[] {
  return Array.from({ length: 2 ** n }, (_, mask) => new Set([...Array(n).keys()].filter((i) => mask & (1 << i))));
}

const base20 = lines(20);
const cases: { name: string; before: string; after: string; hunks: number }[] = [
  {
    name: "two changes far apart",
    before: base20,
    after: base20.replace("line 2\n", "LINE 2\n").replace("line 18\n", "LINE 18\n"),
    hunks: 2,
  },
  {
    // 6 unchanged lines between them: their contexts overlap, so a unified diff prints one hunk.
    name: "overlapping context joins two changes",
    before: base20,
    after: base20.replace("line 3\n", "LINE 3\n").replace("line 10\n", "LINE 10\n"),
    hunks: 1,
  },
  {
    // 7 unchanged lines between them: the contexts touch but do not overlap.
    name: "changes 7 lines apart stay two hunks",
    before: base20,
    after: base20.replace("line 3\n", "LINE 3\n").replace("line 11\n", "LINE 11\n"),
    hunks: 2,
  },
  {
    name: "adjacent insert and delete are one hunk",
    before: base20,
    after: base20.replace("line 5\n", "").replace("line 6\n", "line 6\nnew after 6\n"),
    hunks: 1,
  },
  {
    name: "a file that ends without a newline, changed at both ends",
    before: `${lines(15)}last`,
    after: `FIRST\n${lines(15).slice("line 1\n".length)}last changed`,
    hunks: 2,
  },
  {
    name: "a newline added at the end, and a change at the top",
    before: `${lines(15)}last`,
    after: `${lines(15).replace("line 1\n", "line one\n")}last\n`,
    hunks: 2,
  },
  {
    name: "CRLF lines keep their endings",
    before: lines(20).replaceAll("\n", "\r\n"),
    after: lines(20)
      .replaceAll("\n", "\r\n")
      .replace("line 1\r\n", "line 1\r\ninserted\r\n")
      .replace("line 19\r\n", ""),
    hunks: 2,
  },
  {
    name: "a line whose ending alone changed is a change",
    before: lines(20),
    after: lines(20).replace("line 2\n", "line 2\r\n").replace("line 17\n", "line seventeen\n"),
    hunks: 2,
  },
  {
    name: "three hunks, one an insertion at the very start, one a deletion at the very end",
    before: lines(40),
    after: `zero\n${lines(40).replace("line 20\n", "LINE 20\n").replace("line 40\n", "")}`,
    hunks: 3,
  },
  { name: "an empty base", before: "", after: "a\nb\n", hunks: 1 },
  { name: "no change", before: base20, after: base20, hunks: 0 },
];

describe("splitHunks and rebuildWithHunks", () => {
  for (const c of cases) {
    test(`${c.name}: ${c.hunks} hunk(s); every kept set rebuilds exactly`, () => {
      const hunks = splitHunks(c.before, c.after)!;
      expect(hunks.length).toBe(c.hunks);
      expect(rebuildWithHunks(c.before, hunks, new Set(hunks.map((h) => h.index)))).toBe(c.after);
      expect(rebuildWithHunks(c.before, hunks, new Set())).toBe(c.before);
      for (const kept of subsets(hunks.length)) {
        const rebuilt = rebuildWithHunks(c.before, hunks, kept);
        // Each hunk's change is there exactly when it is kept: re-splitting the result against the base gives the kept hunks.
        const again = splitHunks(c.before, rebuilt)!;
        expect(again.map((h) => h.replacement)).toEqual(
          hunks.filter((h) => kept.has(h.index)).map((h) => h.replacement),
        );
        // Lines outside the kept hunks are the base's own bytes, endings included.
        for (const line of rawLines(rebuilt)) if (!line.endsWith("\n")) expect(rebuilt.endsWith(line)).toBe(true);
      }
    });
  }

  test("two far changes: keeping only the second writes only it", () => {
    const after = base20.replace("line 2\n", "LINE 2\n").replace("line 18\n", "LINE 18\n");
    const hunks = splitHunks(base20, after)!;
    expect(rebuildWithHunks(base20, hunks, new Set([1]))).toBe(base20.replace("line 18\n", "LINE 18\n"));
    expect(rebuildWithHunks(base20, hunks, new Set([0]))).toBe(base20.replace("line 2\n", "LINE 2\n"));
  });

  test("CRLF: a kept hunk brings its CRLF lines, the rest of the file keeps its own", () => {
    const before = lines(20).replaceAll("\n", "\r\n");
    const after = before.replace("line 1\r\n", "line 1\r\ninserted\r\n").replace("line 19\r\n", "");
    const hunks = splitHunks(before, after)!;
    expect(rebuildWithHunks(before, hunks, new Set([0]))).toBe(before.replace("line 1\r\n", "line 1\r\ninserted\r\n"));
    expect(rebuildWithHunks(before, hunks, new Set([1]))).toBe(before.replace("line 19\r\n", ""));
    expect(hunks[0]!.lines).toContain("+inserted");
  });

  test("the missing final newline is shown as a unified diff shows it", () => {
    const before = `${lines(15)}last`;
    const after = `${lines(15)}last changed`;
    const [hunk] = splitHunks(before, after)!;
    expect(hunk!.lines.slice(-4)).toEqual([
      "-last",
      "\\ No newline at end of file",
      "+last changed",
      "\\ No newline at end of file",
    ]);
  });

  test("headers and lines match the diff package's unified diff for LF text", () => {
    for (const c of cases.filter((x) => !x.before.includes("\r") && !x.after.includes("\r"))) {
      const ours = splitHunks(c.before, c.after)!;
      const theirs = structuredPatch("a", "b", c.before, c.after, undefined, undefined, { context: 3 }).hunks;
      expect(ours.map((h) => h.lines)).toEqual(theirs.map((h) => h.lines));
      expect(ours.map(hunkLabel)).toEqual(
        theirs.map(
          (h) =>
            `@@ -${h.oldLines === 0 ? h.oldStart - 1 : h.oldStart},${h.oldLines} +${h.newLines === 0 ? h.newStart - 1 : h.newStart},${h.newLines} @@`,
        ),
      );
    }
  });

  test("a hunk's digest binds its content: the same edit elsewhere, or a different edit, differs", () => {
    const a = splitHunks(base20, base20.replace("line 2\n", "X\n"))!;
    const b = splitHunks(base20, base20.replace("line 3\n", "X\n"))!;
    const c = splitHunks(base20, base20.replace("line 2\n", "Y\n"))!;
    expect(a[0]!.digest).not.toBe(b[0]!.digest);
    expect(a[0]!.digest).not.toBe(c[0]!.digest);
    expect(splitHunks(base20, base20.replace("line 2\n", "X\n"))![0]!.digest).toBe(a[0]!.digest);
  });
});
