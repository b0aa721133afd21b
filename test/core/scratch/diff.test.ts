import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { lstatSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DiskFileOps } from "../../../core/file-ops.ts";
import { diffScratch } from "../../../core/scratch/diff.ts";
import { disposeScratch } from "../../../core/scratch/dispose.ts";
import { makeScratch } from "../../../core/scratch/make.ts";
import { openWorkspace } from "../../../core/workspace.ts";
import { writeTree } from "../../support/temp.ts";
import { dec, tempDir } from "../../support/run-command-world.ts";

// diffScratch: what it reads of a command's scratch, and the per-run cap.

describe("diffScratch reads only what the walk recorded, within a per-run cap", () => {
  async function scratchOf(files: Record<string, string>) {
    const root = tempDir("pencil-diff-ws-");
    writeTree(root, files);
    const ws = openWorkspace(root);
    const s = await makeScratch(ws, { fs: new DiskFileOps(), visible: () => true, share: "plain", parent: tempDir() });
    return s;
  }

  test("a file or directory swapped for a link to a secret, or a FIFO, is not read (and does not block)", async () => {
    const outside = tempDir();
    writeFileSync(join(outside, "id_rsa"), "OUTSIDE-SECRET\n");
    const s = await scratchOf({ "a.txt": "a\n", "d/x.txt": "x\n" });
    try {
      rmSync(join(s.dir, "a.txt"));
      symlinkSync(join(outside, "id_rsa"), join(s.dir, "a.txt"));
      rmSync(join(s.dir, "d"), { recursive: true });
      symlinkSync(outside, join(s.dir, "d"));
      expect(spawnSync("mkfifo", [join(s.dir, "pipe")]).status).toBe(0);
      const changes = diffScratch(s, 1 << 20);
      expect(changes.every((c) => !c.bytes || !dec(c.bytes).includes("OUTSIDE-SECRET"))).toBe(true);
      expect(changes.find((c) => c.rel === "a.txt" && c.change === "create")?.entry).toBe("link");
      expect(changes.find((c) => c.rel === "d" && c.change === "create")?.entry).toBe("link");
      expect(changes.some((c) => c.rel.startsWith("d/") && c.change !== "delete")).toBe(false);
      expect(changes.find((c) => c.rel === "pipe")?.entry).toBe("other");
      // The copy's root itself swapped for a link: nothing is trusted.
      rmSync(s.dir, { recursive: true });
      symlinkSync(outside, s.dir);
      expect(() => diffScratch(s, 1 << 20)).toThrow("replaced the scratch copy's root");
    } finally {
      expect(disposeScratch(s)).toBe(true);
    }
    expect(lstatSync(outside).isDirectory()).toBe(true);
    expect(readFileSync(join(outside, "id_rsa"), "utf8")).toBe("OUTSIDE-SECRET\n");
  });

  test("past the per-run file or byte cap the rest is reported unread, with the reason", async () => {
    const s = await scratchOf({ "keep.txt": "k\n" });
    try {
      for (const n of ["a", "b", "c"]) writeFileSync(join(s.dir, `${n}.txt`), "0123456789");
      const byFiles = diffScratch(s, 1 << 20, { bytes: 1 << 20, files: 2 });
      expect(byFiles.filter((c) => c.bytes).length).toBe(2);
      expect(byFiles.filter((c) => c.unread).map((c) => c.unread)).toEqual([
        expect.stringContaining("over the per-run cap"),
      ]);
      const byBytes = diffScratch(s, 1 << 20, { bytes: 25, files: 100 });
      expect(byBytes.filter((c) => c.bytes).length).toBe(2);
      expect(byBytes.filter((c) => c.unread).length).toBe(1);
    } finally {
      disposeScratch(s);
    }
  });
});
