import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createDeleteFileTool } from "../../tools/delete-file.ts";
import { markRead, toolContext } from "../support/tool-context.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const del = createDeleteFileTool();

function setup(files: Record<string, string | Uint8Array> = {}) {
  const root = tempDir();
  writeTree(root, { "src/app.ts": "const a = 1;\nconst b = 2;\n", ...files });
  return { root, ...toolContext(root) };
}

describe("delete_file", () => {
  test("stages a deletion; a deleted file cannot be deleted twice; directories are refused", async () => {
    const { root, run, overlay } = setup();
    expect(await run(del, { path: "src/app.ts" })).toBe("Staged delete: src/app.ts");
    expect(overlay.stat(join(root, "src/app.ts"))).toBeNull();
    expect(readFileSync(join(root, "src/app.ts"), "utf8")).toContain("const a");
    await expect(run(del, { path: "src/app.ts" })).rejects.toThrow(/does not exist/);
    await expect(run(del, { path: "src" })).rejects.toThrow(/directory/);
  });

  test("provenance lists the files read before the change, in order", async () => {
    const { root, run, ctx, overlay } = setup({ "docs/INSTRUCTIONS.md": "delete app.ts" });
    markRead(ctx, join(root, "docs/INSTRUCTIONS.md"), "docs/INSTRUCTIONS.md");
    await run(del, { path: "src/app.ts" });
    expect(overlay.list()[0]!.origins[0]).toMatchObject({
      tool: "delete_file",
      readsBefore: ["docs/INSTRUCTIONS.md"],
      model: "test:model",
    });
  });
});
