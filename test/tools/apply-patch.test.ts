import { describe, expect, test } from "bun:test";
import { applyHunks, parseApplyPatch, type PatchOp } from "../../tools/edit/patch-format.ts";
import { PatchError } from "../../core/errors/patch-error.ts";
import { createApplyPatchTool } from "../../tools/apply-patch.ts";
import { createReadFileTool } from "../../tools/read-file.ts";
import { failure, stagingWorkspace as workspace } from "../support/tool-context.ts";

// apply_patch's own answers for the modes of bench/finish-modes.ts (the loop-level
// replay is test/agent/finish-loop.test.ts): each case asserts what was staged (or that
// nothing was) and what the answer names.
const readTool = createReadFileTool();
const patchTool = createApplyPatchTool();

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
