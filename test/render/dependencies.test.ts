import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildChangeset, newChangesetId } from "../../core/staging/changeset.ts";
import { DiskFileOps } from "../../core/file-ops.ts";
import { Overlay } from "../../core/staging/overlay.ts";
import { openWorkspace } from "../../core/workspace.ts";
import { findDependencies, splitDependencies } from "../../render/dependencies.ts";
import { tempDir, writeTree } from "../support/temp.ts";

test("a staged test importing a staged module depends on it, directly or through an unchanged index", () => {
  const root = tempDir();
  writeTree(root, {
    "src/index.ts": 'export * from "./util.ts";\n',
    "src/util.ts": "export const a = 1;\n",
    "README.md": "x\n",
  });
  const overlay = new Overlay(new DiskFileOps());
  const origin = { tool: "write_file", callId: "c", model: "m", readsBefore: [] };
  const put = (path: string, text: string) =>
    overlay.writeBytes(join(root, path), new TextEncoder().encode(text), { origin });
  put("src/util.ts", "export const a = 2;\n");
  put("src/other.ts", 'import { a } from "./util";\nexport const b = a;\n');
  put("test/util.test.ts", 'import { a } from "../src/index.ts";\n');
  put("README.md", "see ./src/util.ts\n");
  const cs = buildChangeset({
    id: newChangesetId(),
    goal: "g",
    workspace: openWorkspace(root),
    staged: overlay.list(),
    readDisk: (real) => readFileSync(real),
  });
  const read = (path: string) => {
    try {
      return readFileSync(join(root, path), "utf8");
    } catch {
      return null;
    }
  };
  const deps = findDependencies(cs, read);
  expect(deps).toEqual([
    { from: "src/other.ts", to: "src/util.ts" },
    { from: "test/util.test.ts", to: "src/util.ts" },
  ]);
  // Without the disk, the import through src/index.ts is not seen.
  expect(findDependencies(cs)).toEqual([{ from: "src/other.ts", to: "src/util.ts" }]);
  // Only "approved imports rejected" breaks anything.
  expect(splitDependencies(deps, ["test/util.test.ts"], ["src/util.ts"])).toEqual([
    { from: "test/util.test.ts", to: "src/util.ts" },
  ]);
  expect(splitDependencies(deps, ["src/util.ts"], ["test/util.test.ts", "src/other.ts"])).toEqual([]);
});
