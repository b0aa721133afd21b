import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createWriteFileTool } from "../../tools/write-file.ts";
import { markRead, toolContext } from "../support/tool-context.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const write = createWriteFileTool();
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

function setup(files: Record<string, string | Uint8Array> = {}) {
  const root = tempDir();
  writeTree(root, { "src/app.ts": "const a = 1;\nconst b = 2;\n", ...files });
  return { root, ...toolContext(root) };
}

describe("write_file", () => {
  test("creates a missing file and needs a read to overwrite an existing one", async () => {
    const { root, run, ctx, overlay } = setup();
    expect(await run(write, { path: "notes.md", content: "# hi\n" })).toBe("Staged write: notes.md");
    await expect(run(write, { path: "src/app.ts", content: "x" })).rejects.toThrow(/read_file/);
    markRead(ctx, join(root, "src/app.ts"), "src/app.ts");
    await run(write, { path: "src/app.ts", content: "replaced\n" });
    expect(dec(overlay.readBytes(join(root, "src/app.ts")))).toBe("replaced\n");
  });

  test("an overwrite keeps the file's CRLF and BOM", async () => {
    const { root, run, ctx, overlay } = setup({ "win.txt": "\ufeffa\r\nb\r\n" });
    markRead(ctx, join(root, "win.txt"), "win.txt");
    await run(write, { path: "win.txt", content: "x\ny\n" });
    expect(Buffer.from(overlay.readBytes(join(root, "win.txt"))).toString("utf8")).toBe("\ufeffx\r\ny\r\n");
  });
});
