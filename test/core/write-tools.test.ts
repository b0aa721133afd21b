import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../../core/hash.ts";
import { createCreateFileTool } from "../../tools/create-file.ts";
import { createDeleteFileTool } from "../../tools/delete-file.ts";
import { createEditFileTool } from "../../tools/edit-file.ts";
import { createWriteFileTool } from "../../tools/write-file.ts";
import type { ToolContext } from "../../tools/tool.ts";
import { toolContext } from "../support/tool-context.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const create = createCreateFileTool();
const edit = createEditFileTool();
const write = createWriteFileTool();
const del = createDeleteFileTool();
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** Records a disk read the way read_file does, so the write tools see a prior read. */
function markRead(ctx: ToolContext, real: string, display: string) {
  const st = statSync(real);
  ctx.reads.record(real, display, { size: st.size, mtimeMs: st.mtimeMs, hash: sha256(readFileSync(real)) });
}

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

  test("not found teaches with the closest lines; prefixes and whitespace-only mismatches are recovered (more in recovery.test.ts)", async () => {
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
