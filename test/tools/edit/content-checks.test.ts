import { describe, expect, test } from "bun:test";
import { createCreateFileTool } from "../../../tools/create-file.ts";
import { createEditFileTool } from "../../../tools/edit-file.ts";
import { createReadFileTool } from "../../../tools/read-file.ts";
import { createWriteFileTool } from "../../../tools/write-file.ts";
import { failure, stagingWorkspace as workspace } from "../../support/tool-context.ts";

// The checks the editing tools make on content before staging it, for the modes of
// bench/finish-modes.ts (the loop-level replay is test/agent/finish-loop.test.ts): each
// case asserts what was staged (or that nothing was) and what the answer names.
const edit = createEditFileTool();
const write = createWriteFileTool();
const create = createCreateFileTool();
const readTool = createReadFileTool();

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
