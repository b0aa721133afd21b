import { describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { DiskFileOps } from "../../core/file-ops.ts";
import { sha256 } from "../../core/hash.ts";
import { createReadFileTool } from "../../tools/read-file.ts";
import { tempDir, writeTree } from "../support/temp.ts";
import { failure, toolContext } from "../support/tool-context.ts";

/** A temporary workspace holding `files` (removed after the run). */
function tree(files: Record<string, string | Uint8Array>): string {
  const root = tempDir("pencil-read-");
  writeTree(root, files);
  return root;
}

const read = createReadFileTool();
const enc = new TextEncoder();

describe("read_file", () => {
  test("numbered lines: right-aligned number, a tab, the text", async () => {
    const root = tree({ "a.ts": "one\ntwo\n\nfour\n" });
    const { run } = toolContext(root);
    expect(await run(read, { path: "a.ts" })).toBe("     1\tone\n     2\ttwo\n     3\t\n     4\tfour");
  });

  test("offset and limit select a window, and say how to read on", async () => {
    const root = tree({ "a.txt": Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") });
    const { run } = toolContext(root);
    expect(await run(read, { path: "a.txt", offset: 3, limit: 2 })).toBe(
      "     3\tline 3\n     4\tline 4\n[Lines 3-4 of 10 shown. Read on with offset=5.]",
    );
    expect(await run(read, { path: "a.txt", offset: 9 })).toBe("     9\tline 9\n    10\tline 10");
    expect((await failure(run(read, { path: "a.txt", offset: 11 }))).message).toBe(
      "a.txt has 10 lines; offset 11 is past the end. Use an offset from 1 to 10.",
    );
  });

  test("the line cap applies without a limit, and bounds a larger one", async () => {
    const root = tree({ "a.txt": Array.from({ length: 12 }, (_, i) => `l${i + 1}`).join("\n") + "\n" });
    const { run } = toolContext(root, { limits: { readLineCap: 5 } });
    const out = (await run(read, { path: "a.txt" })).split("\n");
    expect(out.length).toBe(6);
    expect(out[4]).toBe("     5\tl5");
    expect(out[5]).toBe("[Lines 1-5 of 12 shown. Read on with offset=6.]");
    expect((await run(read, { path: "a.txt", offset: 6, limit: 100 })).split("\n").at(-1)).toBe(
      "[Lines 6-10 of 12 shown (at most 5 lines per read). Read on with offset=11.]",
    );
  });

  test("long lines are cut with a marker giving their length", async () => {
    const root = tree({ "min.js": `${"x".repeat(12_345)}\nshort\n` });
    const { run } = toolContext(root, { limits: { maxLineChars: 10 } });
    expect(await run(read, { path: "min.js" })).toBe(`     1\txxxxxxxxxx… [line cut: 12,345 chars]\n     2\tshort`);
  });

  test("a BOM and CRLF line endings are shown as clean text", async () => {
    const root = tree({ "win.txt": "\ufeffalpha\r\nbeta\r\n" });
    const { run } = toolContext(root);
    expect(await run(read, { path: "win.txt" })).toBe("     1\talpha\n     2\tbeta");
  });

  test("binary files are described, never decoded; empty files say so", async () => {
    const root = tree({
      "img.png": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]),
      "latin.txt": new Uint8Array([0x63, 0x61, 0x66, 0xe9]),
      "empty.txt": "",
    });
    const { run } = toolContext(root);
    expect(await run(read, { path: "img.png" })).toBe("(img.png is binary, 8 bytes; not shown)");
    expect(await run(read, { path: "latin.txt" })).toBe("(latin.txt is binary, 4 bytes; not shown)");
    expect(await run(read, { path: "empty.txt" })).toBe("(empty.txt is empty: 0 bytes)");
  });

  test("a successful read is recorded in the ledger: a disk snapshot, or 'staged' for overlay content", async () => {
    const root = tree({ "a.ts": "disk\n", "b.ts": "old\n" });
    const t = toolContext(root);
    await t.run(read, { path: "a.ts" });
    const st = statSync(join(root, "a.ts"));
    expect(t.ctx.reads.get(join(t.ws.root, "a.ts"))).toEqual({ size: 5, mtimeMs: st.mtimeMs, hash: sha256("disk\n") });
    t.overlay.writeBytes(join(t.ws.root, "b.ts"), enc.encode("staged\n"));
    expect(await t.run(read, { path: "b.ts" })).toBe("     1\tstaged");
    expect(t.ctx.reads.get(join(t.ws.root, "b.ts"))).toBe("staged");
    expect(t.ctx.reads.readsSoFar()).toEqual(["a.ts", "b.ts"]);
    await failure(t.run(read, { path: "missing.ts" }));
    expect(t.ctx.reads.readsSoFar()).toEqual(["a.ts", "b.ts"]);
  });

  test("works on the plain disk too (no overlay)", async () => {
    const root = tree({ "a.ts": "x\n" });
    const t = toolContext(root, { fs: new DiskFileOps() });
    expect(await t.run(read, { path: "a.ts" })).toBe("     1\tx");
    expect(t.ctx.reads.get(join(t.ws.root, "a.ts"))).toMatchObject({ size: 2 });
  });

  test("a directory, a missing file (with near misses) and a staged deletion are clear errors", async () => {
    const root = tree({ "src/Config.ts": "x\n", "lib/util/helpers.ts": "x\n", "gone.ts": "x\n" });
    const t = toolContext(root);
    expect((await failure(t.run(read, { path: "src" }))).message).toBe(
      'src is a directory, not a file. Use list_files with path "src" to see what is in it.',
    );
    expect((await failure(t.run(read, { path: "src/config.ts" }))).message).toBe(
      "src/config.ts does not exist. Did you mean: src/Config.ts?",
    );
    expect((await failure(t.run(read, { path: "helpers.ts" }))).message).toBe(
      "helpers.ts does not exist. Did you mean: lib/util/helpers.ts?",
    );
    expect((await failure(t.run(read, { path: "nothing.ts" }))).message).toBe(
      "nothing.ts does not exist. Use list_files or search to find the right path.",
    );
    t.overlay.remove(join(t.ws.root, "gone.ts"));
    expect((await failure(t.run(read, { path: "gone.ts" }))).message).toContain("gone.ts is staged for deletion");
  });

  test("a file over the size limit is refused whole, but can be read in slices", async () => {
    const root = tree({ "big.log": Array.from({ length: 400 }, (_, i) => `entry ${i + 1}`).join("\n") });
    const { run } = toolContext(root, { limits: { maxFileBytes: 1000 } });
    const err = await failure(run(read, { path: "big.log" }));
    expect(err.message).toContain("big.log is 3,891 bytes, over the 1,000-byte limit for reading it whole.");
    expect(err.message).toContain("Read a slice with offset and limit");
    expect(await run(read, { path: "big.log", offset: 200, limit: 2 })).toBe(
      "   200\tentry 200\n   201\tentry 201\n[Lines 200-201 of 400 shown. Read on with offset=202.]",
    );
  });
});
