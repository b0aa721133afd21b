import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createCreateFileTool } from "../../tools/create-file.ts";
import { toolContext } from "../support/tool-context.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const create = createCreateFileTool();
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

function setup(files: Record<string, string | Uint8Array> = {}) {
  const root = tempDir();
  writeTree(root, { "src/app.ts": "const a = 1;\nconst b = 2;\n", ...files });
  return { root, ...toolContext(root) };
}

describe("create_file", () => {
  test("stages a new file and answers with the contract's wording", async () => {
    const { root, run, overlay } = setup();
    expect(await run(create, { path: "src/new.ts", content: "export {};\n" })).toBe("Staged create: src/new.ts");
    expect(dec(overlay.readBytes(join(root, "src/new.ts")))).toBe("export {};\n");
    expect(() => readFileSync(join(root, "src/new.ts"))).toThrow();
  });

  test("fails when the file exists, telling the model what to use instead", async () => {
    const { run } = setup();
    await expect(run(create, { path: "src/app.ts", content: "x" })).rejects.toThrow(/already exists.*edit_file/);
  });

  test("refuses content over the per-file cap", async () => {
    const root = tempDir();
    const { run } = toolContext(root, { limits: { maxFileBytes: 8 } });
    await expect(run(create, { path: "big.txt", content: "123456789" })).rejects.toThrow(/over the 8-byte limit/);
  });
});
