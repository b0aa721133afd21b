import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createEditFileTool } from "../../tools/edit-file.ts";
import { markRead, toolContext } from "../support/tool-context.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const edit = createEditFileTool();
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

function setup(files: Record<string, string | Uint8Array> = {}) {
  const root = tempDir();
  writeTree(root, { "src/app.ts": "const a = 1;\nconst b = 2;\n", ...files });
  return { root, ...toolContext(root) };
}

describe("edit_file", () => {
  test("needs a prior read of an existing file", async () => {
    const { run } = setup();
    await expect(run(edit, { path: "src/app.ts", old_string: "a = 1", new_string: "a = 10" })).rejects.toThrow(
      /has not been read.*read_file/,
    );
  });

  test("replaces exactly one occurrence and keeps the disk untouched", async () => {
    const { root, run, ctx, overlay } = setup();
    const real = join(root, "src/app.ts");
    markRead(ctx, real, "src/app.ts");
    expect(await run(edit, { path: "src/app.ts", old_string: "a = 1", new_string: "a = 10" })).toBe(
      "Staged edit: src/app.ts",
    );
    expect(dec(overlay.readBytes(real))).toBe("const a = 10;\nconst b = 2;\n");
    expect(readFileSync(real, "utf8")).toBe("const a = 1;\nconst b = 2;\n");
    // A second edit builds on the staged content without another read.
    await run(edit, { path: "src/app.ts", old_string: "b = 2", new_string: "b = 20" });
    expect(dec(overlay.readBytes(real))).toBe("const a = 10;\nconst b = 20;\n");
  });

  test("refuses when the disk changed since the read: by size", async () => {
    const { root, run, ctx } = setup();
    const real = join(root, "src/app.ts");
    markRead(ctx, real, "src/app.ts");
    writeFileSync(real, "const a = 1;\nconst b = 2;\n// owner's note\n");
    await expect(run(edit, { path: "src/app.ts", old_string: "a = 1", new_string: "a = 3" })).rejects.toThrow(
      /changed on disk since you read it/,
    );
  });

  test("refuses when the disk changed with the same size and mtime: by hash", async () => {
    const { root, run, ctx } = setup();
    const real = join(root, "src/app.ts");
    utimesSync(real, 1_700_000_000, 1_700_000_000);
    markRead(ctx, real, "src/app.ts");
    const before = statSync(real);
    writeFileSync(real, "const a = 7;\nconst b = 2;\n");
    utimesSync(real, 1_700_000_000, 1_700_000_000);
    expect(statSync(real).mtimeMs).toBe(before.mtimeMs);
    expect(statSync(real).size).toBe(before.size);
    await expect(run(edit, { path: "src/app.ts", old_string: "b = 2", new_string: "b = 3" })).rejects.toThrow(
      /changed on disk/,
    );
  });

  test("not found teaches with the closest lines; prefixes and whitespace-only mismatches are recovered (more in recovery-modes.test.ts)", async () => {
    const { root, run, ctx, overlay } = setup({ "src/indent.ts": "function f() {\n    return 1;\n}\n" });
    markRead(ctx, join(root, "src/app.ts"), "src/app.ts");
    markRead(ctx, join(root, "src/indent.ts"), "src/indent.ts");
    expect(
      await run(edit, { path: "src/app.ts", old_string: "     1\tconst a = 1;", new_string: "     1\tconst a = 5;" }),
    ).toMatch(/Staged edit: src\/app.ts.*line-number prefixes/);
    expect(dec(overlay.readBytes(join(root, "src/app.ts")))).toBe("const a = 5;\nconst b = 2;\n");
    expect(
      await run(edit, {
        path: "src/indent.ts",
        old_string: "function f() {\n\treturn 1;",
        new_string: "function f() {\n\treturn 2;",
      }),
    ).toMatch(/tolerant match at line 1/);
    expect(dec(overlay.readBytes(join(root, "src/indent.ts")))).toBe("function f() {\n    return 2;\n}\n");
    await expect(run(edit, { path: "src/app.ts", old_string: "CONST B = 2", new_string: "x" })).rejects.toThrow(
      /line 2[\s\S]*const b = 2;[\s\S]*capitalisation/,
    );
    await expect(run(edit, { path: "src/app.ts", old_string: "nothing like it", new_string: "x" })).rejects.toThrow(
      /not found/,
    );
  });

  test("found several times: add context or set replace_all", async () => {
    const { root, run, ctx, overlay } = setup({ "dup.txt": "x\nx\nx\n" });
    const real = join(root, "dup.txt");
    markRead(ctx, real, "dup.txt");
    await expect(run(edit, { path: "dup.txt", old_string: "x", new_string: "y" })).rejects.toThrow(
      /occurs 3 times.*replace_all/,
    );
    expect(await run(edit, { path: "dup.txt", old_string: "x", new_string: "y", replace_all: true })).toBe(
      "Staged edit: dup.txt (3 replacements)",
    );
    expect(dec(overlay.readBytes(real))).toBe("y\ny\ny\n");
  });

  test("keeps CRLF line endings and a BOM, matching LF old_string", async () => {
    const { root, run, ctx, overlay } = setup({ "win.txt": "\ufeffone\r\ntwo\r\nthree\r\n" });
    const real = join(root, "win.txt");
    markRead(ctx, real, "win.txt");
    await run(edit, { path: "win.txt", old_string: "one\ntwo", new_string: "one\n2\nmore" });
    const bytes = Buffer.from(overlay.readBytes(real));
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(bytes.toString("utf8")).toBe("\ufeffone\r\n2\r\nmore\r\nthree\r\n");
  });

  test("refuses binary files", async () => {
    const { root, run, ctx } = setup({ "img.bin": new Uint8Array([0x89, 0x50, 0x00, 0x01, 0xff]) });
    markRead(ctx, join(root, "img.bin"), "img.bin");
    await expect(run(edit, { path: "img.bin", old_string: "P", new_string: "Q" })).rejects.toThrow(
      /binary file \(5 bytes\)/,
    );
  });

  test("keeps the file mode", async () => {
    const { root, run, ctx, overlay } = setup({ "run.sh": "echo hi\n" });
    const real = join(root, "run.sh");
    chmodSync(real, 0o755);
    markRead(ctx, real, "run.sh");
    await run(edit, { path: "run.sh", old_string: "hi", new_string: "hello" });
    expect(overlay.list()[0]!.after!.mode).toBe(0o755);
  });
});
