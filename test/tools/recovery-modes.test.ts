import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../../core/hash.ts";
import { createCreateFileTool } from "../../tools/create-file.ts";
import { createEditFileTool } from "../../tools/edit-file.ts";
import { createListFilesTool } from "../../tools/list-files.ts";
import { createReadFileTool } from "../../tools/read-file.ts";
import { createSearchTool } from "../../tools/search.ts";
import type { ToolContext } from "../../tools/tool.ts";
import { createWriteFileTool } from "../../tools/write-file.ts";
import { failure, toolContext } from "../support/tool-context.ts";
import { tempDir, writeTree } from "../support/temp.ts";

// The tools' own answers to the ways small models fail (the loop-level replay is
// test/agent/recovery-loop.test.ts; the loop's repairs and nudges are
// test/agent/recovery-modes.test.ts). Each case asserts the file as staged (or untouched)
// and that the answer carries the actual text, line numbers or paths.
const edit = createEditFileTool();
const write = createWriteFileTool();
const create = createCreateFileTool();
const readTool = createReadFileTool();
const list = createListFilesTool();
const search = createSearchTool({ rgPath: null });
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

function markRead(ctx: ToolContext, root: string, path: string) {
  const real = join(root, path);
  const st = statSync(real);
  ctx.reads.record(real, path, { size: st.size, mtimeMs: st.mtimeMs, hash: sha256(readFileSync(real)) });
}

function workspace(files: Record<string, string>) {
  const root = tempDir();
  writeTree(root, files);
  const t = toolContext(root);
  for (const path of Object.keys(files)) markRead(t.ctx, root, path);
  const view = (path: string) =>
    t.overlay.isStaged(join(root, path))
      ? dec(t.overlay.readBytes(join(root, path)))
      : readFileSync(join(root, path), "utf8");
  return { root, ...t, view };
}

interface EditCase {
  name: string;
  files: Record<string, string>;
  input: { path: string; old_string: string; new_string: string; replace_all?: boolean };
  /** The file afterwards; equal to the original when nothing may be staged. */
  after: string;
  /** Text the answer must contain (nearby text, line numbers). */
  says: (string | RegExp)[];
}

const TWO_BLOCKS =
  "function a() {\n  if (x) {\n    go();\n  }\n}\nfunction b() {\n    if (x) {\n        go();\n    }\n}\n";

const EDIT_CASES: EditCase[] = [
  {
    name: "whitespace-tolerant with two candidates: nothing edited, both places listed",
    files: { "f.ts": TWO_BLOCKS },
    input: { path: "f.ts", old_string: "if (x) {\n  go();\n}", new_string: "if (y) {\n  go();\n}" },
    after: TWO_BLOCKS,
    says: ["2, 7"],
  },
  {
    name: "a value that differs is never tolerated: closest line and the two values",
    files: { "tax.ts": "const TAX_RATE = 0.10;\n" },
    input: { path: "tax.ts", old_string: "const TAX_RATE = 0.15;", new_string: "const TAX_RATE = 0.2;" },
    after: "const TAX_RATE = 0.10;\n",
    says: ["line 1", "const TAX_RATE = 0.10;", '"0.15"', '"0.10"'],
  },
  {
    name: "escaped old_string with a new_string that is not escaped: not read as escapes",
    files: { "m.ts": 'say("hi");\n' },
    input: { path: "m.ts", old_string: 'say(\\"hi\\");', new_string: 'say("bye\\n");' },
    after: 'say("hi");\n',
    says: ['say("hi");', "line 1"],
  },
  {
    name: "numbers at line starts in a YAML file are content, not prefixes",
    files: { "codes.yaml": "1: one\n2: two\n" },
    input: { path: "codes.yaml", old_string: "2: two", new_string: "2: deux" },
    after: "1: one\n2: deux\n",
    says: [],
  },
  {
    name: "prefixes on every line with a re-numbered new_string",
    files: { "a.py": "def f():\n    return 1\n" },
    input: {
      path: "a.py",
      old_string: "     1\tdef f():\n     2\t    return 1",
      new_string: "     1\tdef f():\n     2\t    return 2",
    },
    after: "def f():\n    return 2\n",
    says: ["prefixes removed"],
  },
  {
    name: "a tolerant edit in a CRLF file keeps CRLF and re-indents",
    files: { "w.cs": "class A {\r\n    void F() {\r\n        Go();\r\n    }\r\n}\r\n" },
    input: {
      path: "w.cs",
      old_string: "void F() {\n    Go();\n}",
      new_string: "void F() {\n    Go();\n    Stop();\n}",
    },
    after: "class A {\r\n    void F() {\r\n        Go();\r\n        Stop();\r\n    }\r\n}\r\n",
    says: ["tolerant match at line 2"],
  },
  {
    name: "replace_all never applies a tolerant match to several places",
    files: { "f.ts": TWO_BLOCKS },
    input: { path: "f.ts", old_string: "if (x) {\n  go();\n}", new_string: "if (y) {\n  go();\n}", replace_all: true },
    after: TWO_BLOCKS,
    says: ["2, 7"],
  },
  {
    name: "already applied: the line where new_string is",
    files: { "a.ts": "let a = 1;\nlet b = 3;\n" },
    input: { path: "a.ts", old_string: "let b = 2;", new_string: "let b = 3;" },
    after: "let a = 1;\nlet b = 3;\n",
    says: ["line 2", "already"],
  },
];

describe("edit_file recovers or says what it needs", () => {
  for (const c of EDIT_CASES) {
    test(c.name, async () => {
      const { run, view } = workspace(c.files);
      let answer: string;
      try {
        answer = await run(edit, c.input);
      } catch (error) {
        answer = (error as Error).message;
      }
      expect(view(c.input.path)).toBe(c.after);
      for (const s of c.says)
        expect(answer).toMatch(typeof s === "string" ? new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")) : s);
    });
  }

  test("a 20 MB old_string gets a clear answer naming the limit, never an internal regex error", async () => {
    const { run, view } = workspace({ "a.ts": "const a = 1;\n" });
    const huge = "x ".repeat(10 * 1024 * 1024);
    const error = await failure(run(edit, { path: "a.ts", old_string: huge, new_string: "y" }));
    expect(error.message).toContain("old_string is 20,971,520 characters");
    expect(error.message).toContain("2,097,152");
    expect(error.message).not.toMatch(/regular expression/i);
    expect(view("a.ts")).toBe("const a = 1;\n");
  });

  test("a large old_string under the limit that matches nothing is answered quickly and boundedly", async () => {
    const { run } = workspace({ "a.ts": "const a = 1;\n".repeat(50) });
    const big = "const  a = 1;\n".repeat(40_000);
    const t0 = performance.now();
    const error = await failure(run(edit, { path: "a.ts", old_string: big, new_string: "y" }));
    expect(error.message).toContain("old_string was not found in a.ts");
    expect(error.message.length).toBeLessThan(2_000);
    // Generous: a regex or a quadratic scan of this input took seconds.
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});

describe("whole-file writes", () => {
  test("a legitimate rewrite whose comment mentions 'remaining' is staged, with its deletion counted", async () => {
    const original = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n") + "\n";
    const { run, view } = workspace({ "a.ts": original });
    const answer = await run(write, { path: "a.ts", content: "// process remaining items\nline 0\n" });
    expect(answer).toContain("Staged write: a.ts (+1 -29 lines)");
    expect(answer).toContain("removes 29 of the file's 30 lines");
    expect(view("a.ts")).toBe("// process remaining items\nline 0\n");
  });

  test("a placeholder that loses no line is allowed (the file already had it)", async () => {
    const { run, view } = workspace({ "a.ts": "a();\n// ...\nb();\n" });
    expect(await run(write, { path: "a.ts", content: "a();\n// ...\nb();\nc();\n" })).toContain("(+1 -0 lines)");
    expect(view("a.ts")).toBe("a();\n// ...\nb();\nc();\n");
  });

  test("create_file with a placeholder is refused: there is nothing for it to keep", async () => {
    const { root, run, overlay } = workspace({});
    const error = await failure(run(create, { path: "new.ts", content: "import x from 'x';\n/* … */\n" }));
    expect(error.message).toContain('line 2 "/* … */"');
    expect(overlay.isStaged(join(root, "new.ts"))).toBe(false);
  });
});

describe("paths", () => {
  const files = {
    "src/utils.ts": "export {};\n",
    "src/tax.ts": "export {};\n",
    ".env.local": "SECRET=1\n",
    "docs/guide.md": "# g\n",
  };

  for (const [tool, input, near] of [
    [readTool, { path: "src/util.ts" }, "src/utils.ts"],
    [readTool, { path: "lib/tax.ts" }, "src/tax.ts"],
    [readTool, { path: "src/Utils.ts" }, "src/utils.ts"],
    [edit, { path: "src/taxes.ts", old_string: "a", new_string: "b" }, "src/tax.ts"],
    [list, { path: "doc" }, "docs/"],
    [search, { pattern: "x", path: "sorc" }, "src/"],
  ] as const) {
    test(`${tool.name} ${JSON.stringify(input)} names ${near}`, async () => {
      const { run } = workspace(files);
      const error = await failure(run(tool as never, input as never));
      expect(error.message).toContain(near);
      expect(error.message).not.toContain("create_file");
    });
  }

  test("near misses never name a secret file", async () => {
    const { run } = workspace(files);
    const error = await failure(run(readTool, { path: ".env.locl" }));
    expect(error.message).not.toContain(".env.local");
  });

  test("write_file to a missing path beside a near-namesake creates nothing", async () => {
    const { root, run, overlay } = workspace(files);
    const error = await failure(run(write, { path: "src/util.ts", content: "x\n" }));
    expect(error.message).toContain("src/utils.ts");
    expect(error.message).toContain("create_file");
    expect(overlay.isStaged(join(root, "src/util.ts"))).toBe(false);
    // A genuinely new name is still created.
    expect(await run(write, { path: "src/checkout.ts", content: "x\n" })).toBe("Staged write: src/checkout.ts");
  });
});

describe("search and list_files near misses", () => {
  const files = { "src/a.ts": "const scale = 1.0;\nconst total = price  *  qty;\n", "src/B.TS": "x\n" };
  for (const [pattern, says] of [
    ["scale = 1.00", ["src/a.ts:1", "const scale = 1.0;", "trailing zeros"]],
    ["price * qty", ["src/a.ts:2"]],
    ["grand_total|price_total", ["No matches"]],
    ["compute(total)", ["Identifier total alone", "src/a.ts:2"]],
  ] as const) {
    test(`search ${JSON.stringify(pattern)}`, async () => {
      const { run } = workspace(files);
      const answer = await run(search, { pattern });
      for (const s of says) expect(answer).toContain(s);
    });
  }

  test("a pattern over the size limit is a clear answer", async () => {
    const { run } = workspace(files);
    const error = await failure(run(search, { pattern: "a".repeat(10_000) }));
    expect(error.message).toContain("10,000 characters, over the 4,096-character limit");
  });

  test("list_files *.ts finds B.TS ignoring case", async () => {
    const { run } = workspace(files);
    expect(await run(list, { pattern: "*.ts", path: "src" })).toBe("src/a.ts");
    expect(await run(list, { pattern: "b.ts" })).toContain("Ignoring case, these exist: src/B.TS");
  });
});
