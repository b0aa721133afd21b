import { describe, expect, test } from "bun:test";
import { RepeatedCalls } from "../../agent/nudges.ts";
import { findTextToolCalls } from "../../agent/text-tool-calls.ts";
import { claimsSuccess, isContextLengthError } from "../../agent/turn-end.ts";
import { normalizeInput, resolveToolName, stripHarmony } from "../../agent/tool-call-repair.ts";
import { contextWindowOf } from "../../ai/model-specs.ts";
import { answerBudgetFor, fitAnswer } from "../../core/answer-budget.ts";
import { applyHunks, parseApplyPatch, type PatchOp } from "../../tools/edit/patch-format.ts";
import { createApplyPatchTool } from "../../tools/apply-patch.ts";
import { createCreateFileTool } from "../../tools/create-file.ts";
import { createEditFileTool } from "../../tools/edit-file.ts";
import { createReadFileTool } from "../../tools/read-file.ts";
import { createWriteFileTool } from "../../tools/write-file.ts";
import { failure, toolContext } from "../support/tool-context.ts";
import { tempDir, writeTree } from "../support/temp.ts";
import { PatchError } from "../../core/errors/patch-error.ts";

// The tools' own answers for the modes of bench/finish-modes.ts and their
// neighbours (the loop-level replay is test/agent/finish-loop.test.ts): each
// case asserts what was staged (or that nothing was) and what the answer names.
const edit = createEditFileTool();
const write = createWriteFileTool();
const create = createCreateFileTool();
const readTool = createReadFileTool();
const patchTool = createApplyPatchTool();

function workspace(files: Record<string, string>) {
  const root = tempDir();
  writeTree(root, files);
  const t = toolContext(root);
  const staged = (path: string): string | null | undefined => {
    const entry = t.overlay.list().find((e) => e.real === `${t.ws.root}/${path}`);
    if (!entry) return undefined;
    return entry.after ? new TextDecoder().decode(entry.after.bytes) : null;
  };
  return { ...t, staged };
}

describe("apply_patch", () => {
  const file = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

  test("hunks apply in order from where the previous ended; @@ lines are found first", () => {
    const ops = parseApplyPatch(
      "*** Begin Patch\n*** Update File: a.txt\n@@ line 2\n line 3\n-line 4\n+line four\n@@ line 9\n-line 10\n+line ten\n*** End Patch",
    );
    expect(ops[0]!.kind).toBe("update");
    const out = applyHunks(file, (ops[0] as Extract<PatchOp, { kind: "update" }>).hunks, "a.txt");
    expect(out).toBe(file.replace("line 4\n", "line four\n").replace("line 10\n", "line ten\n"));
  });

  test("a context line with other indentation matches, and the file's own line is kept", () => {
    const py = "class A:\n    def f(self):\n        return 1\n";
    const [op] = parseApplyPatch(
      "*** Begin Patch\n*** Update File: a.py\n@@\n def f(self):\n-    return 1\n+        return 2\n*** End Patch",
    );
    expect(applyHunks(py, (op as Extract<PatchOp, { kind: "update" }>).hunks, "a.py")).toBe(
      "class A:\n    def f(self):\n        return 2\n",
    );
  });

  test("a line that cannot be read is named by its line number", () => {
    expect(() => parseApplyPatch("*** Begin Patch\n*** Update File: a\n@@\n?oops\n*** End Patch")).toThrow(/line 4/);
    expect(() => parseApplyPatch("no patch")).toThrow(PatchError);
  });

  test("an update needs a prior read; a failing operation stages none of the patch", async () => {
    const w = workspace({ "a.txt": file, "b.txt": "b\n" });
    const unread = await failure(
      w.run(patchTool, { input: "*** Begin Patch\n*** Update File: a.txt\n@@\n-line 1\n+one\n*** End Patch" }),
    );
    expect(unread.message).toContain("has not been read");
    await w.run(readTool, { path: "a.txt" });
    const partial = await failure(
      w.run(patchTool, {
        input: "*** Begin Patch\n*** Add File: c.txt\n+new\n*** Update File: a.txt\n@@\n-line 99\n+x\n*** End Patch",
      }),
    );
    expect(partial.message).toContain("operation 2 of 2");
    expect(partial.message).toContain("line 99");
    expect(w.overlay.list()).toEqual([]);
  });

  test("adding a file that exists is refused, pointing at Update File", async () => {
    const w = workspace({ "a.txt": file });
    const e = await failure(w.run(patchTool, { input: "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch" }));
    expect(e.message).toContain("*** Update File: a.txt");
  });

  test("every path the patch touches is declared, a move's source and destination both", () => {
    const claims = patchTool.claims({
      input:
        "*** Begin Patch\n*** Update File: a.ts\n*** Move to: b/c.ts\n@@\n-x\n+y\n*** Delete File: d.ts\n*** Add File: e.ts\n+1\n*** End Patch",
    });
    expect(claims).toEqual([
      { path: "a.ts", access: "write" },
      { path: "b/c.ts", access: "write" },
      { path: "d.ts", access: "write" },
      { path: "e.ts", access: "write" },
    ]);
  });
});

describe("content checks before staging", () => {
  const tax =
    "export const TAX_RATE = 0.10;\n\nexport function f(a: number, b: number): boolean {\n  return a < b;\n}\n";

  test("a fence with prose around it is not unwrapped; a Markdown file keeps its fence", async () => {
    const w = workspace({});
    await w.run(create, { path: "a.ts", content: "Here:\n```ts\nconst a = 1;\n```\n" });
    expect(w.staged("a.ts")).toBe("Here:\n```ts\nconst a = 1;\n```\n");
    const answer = await w.run(create, { path: "b.ts", content: "```ts\nconst b = 1;\n```" });
    expect(w.staged("b.ts")).toBe("const b = 1;\n");
    expect(answer).toContain("fence, which was removed");
  });

  test("entities inside a string or regex literal are meant (an escapeHtml function): kept", async () => {
    const w = workspace({});
    const code = 'export const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");\n';
    await w.run(create, { path: "esc.ts", content: code });
    expect(w.staged("esc.ts")).toBe(code);
  });

  test("entities stay when the file already uses them", async () => {
    const w = workspace({ "a.ts": 'const s = "&lt;b&gt;";\n' });
    await w.run(readTool, { path: "a.ts" });
    await w.run(edit, { path: "a.ts", old_string: '"&lt;b&gt;"', new_string: '"&lt;i&gt;"' });
    expect(w.staged("a.ts")).toBe('const s = "&lt;i&gt;";\n');
  });

  test("a lone ======= (a separator) is not a conflict marker; a set of markers is refused with its lines", async () => {
    const w = workspace({ "a.ts": tax });
    await w.run(readTool, { path: "a.ts" });
    await w.run(edit, {
      path: "a.ts",
      old_string: "export const TAX_RATE = 0.10;",
      new_string: "// =======\nexport const TAX_RATE = 0.10;\n=======",
    });
    expect(w.staged("a.ts")).toContain("\n=======\n");
    const w2 = workspace({ "a.ts": tax });
    await w2.run(readTool, { path: "a.ts" });
    const e = await failure(w2.run(write, { path: "a.ts", content: "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n" }));
    expect(e.message).toContain("line 1: <<<<<<< ours");
    expect(w2.overlay.list()).toEqual([]);
  });

  test("a diff of two files as content is refused, saying to send each file's change", async () => {
    const w = workspace({ "a.ts": tax });
    await w.run(readTool, { path: "a.ts" });
    const two =
      "--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-export const TAX_RATE = 0.10;\n+export const TAX_RATE = 0.2;\n--- a/b.ts\n+++ b/b.ts\n@@ -1 +1 @@\n-x\n+y\n";
    const e = await failure(w.run(write, { path: "a.ts", content: two }));
    expect(e.message).toContain("diff of 2 files");
    expect(w.overlay.list()).toEqual([]);
  });

  test("a .patch file's content is the patch itself, written as is", async () => {
    const w = workspace({});
    const body = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
    await w.run(create, { path: "fix.patch", content: body });
    expect(w.staged("fix.patch")).toBe(body);
  });

  test("a placeholder that drops nothing is allowed; one that drops lines names them with the file's numbers", async () => {
    const w = workspace({ "a.ts": tax });
    await w.run(readTool, { path: "a.ts" });
    await w.run(edit, {
      path: "a.ts",
      old_string: "  return a < b;",
      new_string: "  // ... existing code ...\n  return a < b;",
    });
    expect(w.staged("a.ts")).toContain("// ... existing code ...");
    const w2 = workspace({ "a.ts": tax });
    await w2.run(readTool, { path: "a.ts" });
    const e = await failure(
      w2.run(edit, {
        path: "a.ts",
        old_string: "export function f(a: number, b: number): boolean {\n  return a < b;\n}",
        new_string: "export function f(a: number, b: number): boolean {\n  // ... rest of the function ...\n}",
      }),
    );
    expect(e.message).toContain("     4\t  return a < b;");
    expect(w2.overlay.list()).toEqual([]);
  });

  test("a tolerant match re-indents every line of new_string to the file's tabs", async () => {
    const w = workspace({ "a.go": "package a\n\nfunc f() {\n\tif x {\n\t\treturn\n\t}\n}\n" });
    await w.run(readTool, { path: "a.go" });
    await w.run(edit, {
      path: "a.go",
      old_string: "    if x {\n        return\n    }",
      new_string: "    if x {\n        y()\n        if z {\n            return\n        }\n    }",
    });
    expect(w.staged("a.go")).toBe(
      "package a\n\nfunc f() {\n\tif x {\n\t\ty()\n\t\tif z {\n\t\t\treturn\n\t\t}\n\t}\n}\n",
    );
  });

  test("insert_line past the end is refused with the file's length", async () => {
    const w = workspace({ "a.ts": tax });
    await w.run(readTool, { path: "a.ts" });
    const e = await failure(w.run(edit, { path: "a.ts", insert_line: 40, new_string: "x" }));
    expect(e.message).toContain("has 5 lines");
  });
});

describe("arguments in the wrong shape", () => {
  test.each([
    [{ path: ["a", "b"], old_string: "x", new_string: "y" }, "`path` was given as a list"],
    [{ path: null, old_string: "x", new_string: "y" }, "`path` was null"],
    [{ path: 3, old_string: "x", new_string: "y" }, "path must be a string, not a number"],
    [{ path: "a", old_string: "x" }, "new_string is missing"],
  ])("%j is answered with the actual mistake", (input, needle) => {
    const r = normalizeInput(edit, input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain(needle);
  });

  test("an envelope is unwrapped only when none of the tool's own fields is beside it", () => {
    const inner = { path: "a", old_string: "x", new_string: "y" };
    expect(normalizeInput(edit, { name: "edit_file", arguments: inner })).toEqual({ ok: true, value: inner });
    expect(normalizeInput(edit, { path: "b", arguments: inner }).ok).toBe(false);
  });

  test("a list of paths to read_file becomes one input per path", () => {
    const r = normalizeInput(readTool, { path: ["a", "b"], limit: 5 });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.each).toEqual([
        { path: "a", limit: 5 },
        { path: "b", limit: 5 },
      ]);
  });
});

describe("text-form calls, Harmony residue, the end of a turn", () => {
  test.each([
    ['{"name": "read_file", "arguments": {"path": "a"}}', "read_file", { path: "a" }],
    [
      '<tool_call>\n{"name": "read_file", "arguments": "{\\"path\\": \\"a\\"}"}\n</tool_call>',
      "read_file",
      { path: "a" },
    ],
    ['<function=read_file>{"path": "a"}</function>', "read_file", { path: "a" }],
    ["<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>", "read_file", { path: "a" }],
    ['Sure:\n```json\n{"tool": "read_file", "parameters": {"path": "a"}}\n```', "read_file", { path: "a" }],
    [
      '{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\":\\"a\\"}"}}',
      "read_file",
      { path: "a" },
    ],
  ])("%s is read as %s", (text, name, input) => {
    const found = findTextToolCalls(text)!;
    expect(found.calls[0]!.name).toBe(name);
    expect(found.calls[0]!.input).toEqual(input);
  });

  test("prose and code are not calls", () => {
    expect(findTextToolCalls("The rate is 0.10.")).toBeNull();
    expect(findTextToolCalls("```ts\nconst a = { name: 1 };\n```")).toBeNull();
    expect(findTextToolCalls('{"name": "Alice"}')!.calls[0]!.explicit).toBe(false);
  });

  test.each([
    ["edit_file<|channel|>commentary", "edit_file"],
    ["functions.read_file<|constrain|>json", "read_file"],
    ["assistant<|channel|>commentary to=functions.search", "search"],
  ])("Harmony residue %s → %s", (name, real) => {
    expect(resolveToolName(name, ["read_file", "edit_file", "search"])).toBe(real);
  });

  test("Harmony tokens are stripped from arguments text", () => {
    expect(stripHarmony('<|constrain|>json{"path": "a"}<|call|>')).toBe('{"path": "a"}');
  });

  test.each([
    ["I updated src/tax.ts.", true],
    ["Done.", true],
    ["The file has been fixed.", true],
    ["I could not find the rate; which file holds it?", false],
    ["Nothing needs to change: the rate is already 0.2.", false],
  ])("%s claims success: %p", (text, claims) => expect(claimsSuccess(text)).toBe(claims));

  test.each([
    ["HTTP 400: This model's maximum context length is 8192 tokens", true],
    ["Please reduce the length of the messages", true],
    ["prompt is too long: 210000 tokens > 200000 maximum", true],
    ["HTTP 400: invalid tool schema", false],
    ["HTTP 429: rate limit reached", false],
  ])("%s is a context-length refusal: %p", (message, is) => expect(isContextLengthError(message)).toBe(is));
});

describe("loops", () => {
  test("the third identical read is 'already done' without its output while the earlier one is recent; the fifth stops the run", () => {
    const r = new RepeatedCalls();
    const input = { path: "a.ts" };
    expect(r.answer("read_file", input, true, "1\tx")).toBe("1\tx");
    expect(r.answer("read_file", input, true, "1\tx")).toBe("1\tx");
    const third = r.answer("read_file", input, true, "1\tx");
    expect(third).toContain("Already done; unchanged since your last call");
    expect(third).not.toContain("1\tx");
    expect(r.stopReason).toBeNull();
    r.answer("read_file", input, true, "1\tx");
    r.answer("read_file", input, true, "1\tx");
    expect(r.stopReason).toContain("repeated the same read_file call 5 times");
  });

  test("a read whose result changed is not a repeat; an older repeat gets its output again", () => {
    const r = new RepeatedCalls();
    r.answer("read_file", { path: "a" }, true, "one");
    r.answer("read_file", { path: "a" }, true, "two");
    expect(r.answer("read_file", { path: "a" }, true, "two")).toBe("two");
    for (let i = 0; i < 6; i++) r.answer("search", { pattern: String(i) }, true, "x");
    const late = r.answer("read_file", { path: "a" }, true, "two");
    expect(late).toContain("Already done");
    expect(late).toContain("\ntwo");
  });
});

describe("answers that fit the context", () => {
  test("the budget follows the window, known per model, PENCIL_CONTEXT_WINDOW first", () => {
    expect(contextWindowOf({ provider: "groq", modelId: "openai/gpt-oss-120b" }, {})).toBe(131_072);
    expect(contextWindowOf({ provider: "local", modelId: "qwen2.5-coder:7b" }, {})).toBe(32_768);
    expect(contextWindowOf({ provider: "local", modelId: "gemma:2b" }, {})).toBe(8_192);
    expect(contextWindowOf({ provider: "local", modelId: "x" }, { PENCIL_CONTEXT_WINDOW: "4096" })).toBe(4096);
    expect(answerBudgetFor(8192)).toBeLessThan(answerBudgetFor(131_072));
  });

  test("a read is cut at a line and says the offset to read on from; a short answer is untouched", () => {
    const text = Array.from({ length: 500 }, (_, i) => `${String(i + 1).padStart(6)}\tvalue ${i + 1}`).join("\n");
    expect(fitAnswer("read_file", "short", 1000)).toBe("short");
    const cut = fitAnswer("read_file", text, 2000);
    const last = Number(/(\d+)\tvalue \d+\n\[cut/.exec(cut)![1]);
    expect(cut).toContain(`read on at offset ${last + 1}`);
    expect(cut.length).toBeLessThan(2300);
  });

  test("a command keeps its head and its tail", () => {
    const text = Array.from({ length: 5000 }, (_, i) => `out ${i}`).join("\n");
    const cut = fitAnswer("run_command", text, 3000);
    expect(cut).toContain("out 0\n");
    expect(cut).toContain("out 4999");
    expect(cut).toContain("narrow the command's output");
  });
});
