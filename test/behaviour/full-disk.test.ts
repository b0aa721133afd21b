import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyChangeset } from "../../core/apply/apply.ts";
import { setFaultHandler } from "../../core/fault-point.ts";
import { listJournal } from "../../core/apply/journal.ts";
import { undoApply } from "../../core/apply/undo.ts";
import { makeChangeset } from "../fixtures/apply-changeset.ts";
import { tempDir, writeTree } from "../support/temp.ts";
import { ApplyError } from "../../core/errors/apply-error.ts";

// A real full disk: a small tmpfs per test. Mounting needs root (and a kernel that lets
// this container mount); where it cannot be done the tests say so and are skipped.
const mounts: string[] = [];

function mountTmpfs(size: string): string | null {
  const dir = join(tempDir("pencil-full-disk-"), "fs");
  mkdirSync(dir);
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], {
    stderr: "ignore",
    stdout: "ignore",
  });
  if (mounted.exitCode !== 0) return null;
  mounts.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of mounts) Bun.spawnSync(["umount", "-l", dir]);
});

const canMount = (() => {
  const probe = mountTmpfs("64k");
  if (probe === null) console.warn("full-disk tests skipped: cannot mount a tmpfs here (needs root)");
  return probe !== null;
})();

/** Fills the file system of `dir` until exactly `leave` bytes are free (rounded to its blocks). */
function fillUntil(dir: string, leave: number, name = "filler.bin"): void {
  const fs = statfsSync(dir);
  const free = fs.bfree * fs.bsize;
  writeFileSync(join(dir, name), new Uint8Array(Math.max(0, free - leave)));
}

const temps = (dir: string) =>
  readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((n) => n.endsWith(".tmp"));

describe.skipIf(!canMount)("a full disk", () => {
  test("an apply that cannot fit is refused before its first write: every file old, no temp file, no journal entry left applying", () => {
    const root = mountTmpfs("256k")!;
    const names = ["a.txt", "b.txt", "c.txt", "d.txt"];
    writeTree(root, Object.fromEntries(names.map((n) => [n, "o".repeat(8192)])));
    fillUntil(root, 40 * 1024);
    const journalDir = join(tempDir("pencil-full-journal-"), "journal");
    const cs = makeChangeset(
      root,
      names.map((n) => ({ path: n, after: new TextEncoder().encode("n".repeat(32 * 1024)) })),
    );
    expect(() => applyChangeset({ changeset: cs, approved: names, journalDir })).toThrow(ApplyError);
    expect(() => applyChangeset({ changeset: cs, approved: names, journalDir })).toThrow(
      /Nothing was applied: the file system of .* free and the apply needs about/,
    );
    for (const n of names) expect(readFileSync(join(root, n), "utf8")).toBe("o".repeat(8192));
    expect(temps(root)).toEqual([]);
    expect(listJournal(journalDir)).toEqual([]);
  });

  test("space taken by someone else mid-apply: the failed write's temp file is freed first, so the rollback fits and every file is old", () => {
    const root = mountTmpfs("512k")!;
    writeTree(root, { "a.txt": "a".repeat(4096), "b.bin": "b".repeat(4096) });
    const journalDir = join(tempDir("pencil-full-journal-"), "journal");
    const cs = makeChangeset(root, [
      { path: "a.txt", after: new TextEncoder().encode("A".repeat(4096)) },
      { path: "b.bin", after: new Uint8Array(64 * 1024).fill(66) },
    ]);
    // After the first file, another process leaves only 12 KiB: b.bin's temp file fills it and fails with ENOSPC.
    setFaultHandler((point) => {
      if (point === "file-placed") fillUntil(root, 12 * 1024, "someone-else.bin");
    });
    try {
      expect(() => applyChangeset({ changeset: cs, approved: ["a.txt", "b.bin"], journalDir })).toThrow(
        /ENOSPC|no space/i,
      );
    } finally {
      setFaultHandler(null);
    }
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a".repeat(4096));
    expect(readFileSync(join(root, "b.bin"), "utf8")).toBe("b".repeat(4096));
    expect(temps(root)).toEqual([]);
    const [entry] = listJournal(journalDir);
    expect(entry!.state).toBe("rolled-back");
    expect(existsSync(join(root, "someone-else.bin"))).toBe(true);
  });

  test("a journal that cannot be written (PENCIL_HOME's disk is full) refuses the apply in Pencil's words; every file old, no entry left", () => {
    const root = tempDir("pencil-full-ws-");
    writeTree(root, { "a.txt": "a".repeat(4096), "b.txt": "b".repeat(4096) });
    const home = mountTmpfs("256k")!;
    const journalDir = join(home, "journal");
    mkdirSync(journalDir);
    fillUntil(home, 16 * 1024);
    const cs = makeChangeset(root, [
      { path: "a.txt", after: new Uint8Array(64 * 1024).fill(65) },
      { path: "b.txt", after: new Uint8Array(64 * 1024).fill(66) },
    ]);
    let thrown: unknown;
    try {
      applyChangeset({ changeset: cs, approved: ["a.txt", "b.txt"], journalDir });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApplyError);
    expect((thrown as Error).message).toMatch(/^Nothing was applied: .*journal/);
    expect((thrown as Error).message).toContain(home);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a".repeat(4096));
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("b".repeat(4096));
    expect(readdirSync(journalDir)).toEqual([]);
  });

  test("a journal on the workspace's own file system is counted before the first write: refused whole, not failed half-way", () => {
    const root = mountTmpfs("512k")!;
    writeTree(root, { "a.txt": "a".repeat(4096), "b.txt": "b".repeat(4096) });
    const journalDir = join(root, ".home", "journal");
    // Room for the new files (2 × 64 KiB and a temporary file), not for them and a journal holding them too.
    fillUntil(root, 220 * 1024);
    const cs = makeChangeset(root, [
      { path: "a.txt", after: new Uint8Array(64 * 1024).fill(65) },
      { path: "b.txt", after: new Uint8Array(64 * 1024).fill(66) },
    ]);
    const written: string[] = [];
    expect(() =>
      applyChangeset({
        changeset: cs,
        approved: ["a.txt", "b.txt"],
        journalDir,
        onFileWritten: (p) => written.push(p),
      }),
    ).toThrow(/^Nothing was applied: the file system of .* free and the apply needs about/);
    expect(written).toEqual([]);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a".repeat(4096));
    expect(temps(root)).toEqual([]);
    expect(existsSync(journalDir) ? readdirSync(journalDir) : []).toEqual([]);
  });

  test("an undo that cannot fit changes nothing and says so; with space freed it reverts every file", () => {
    const root = mountTmpfs("512k")!;
    const names = ["a.txt", "b.txt", "c.txt", "d.txt"];
    writeTree(root, Object.fromEntries(names.map((n) => [n, "o".repeat(32 * 1024)])));
    const journalDir = join(tempDir("pencil-full-journal-"), "journal");
    const cs = makeChangeset(
      root,
      names.map((n) => ({ path: n, after: new TextEncoder().encode("n".repeat(4096)) })),
    );
    const { applyId } = applyChangeset({ changeset: cs, approved: names, journalDir });
    fillUntil(root, 20 * 1024);
    expect(() => undoApply(journalDir, applyId!)).toThrow(/Nothing was undone: the file system of .* free/);
    for (const n of names) expect(readFileSync(join(root, n), "utf8")).toBe("n".repeat(4096));
    expect(temps(root)).toEqual([]);
    expect(listJournal(journalDir)[0]!.state).toBe("applied");
    Bun.spawnSync(["rm", join(root, "filler.bin")]);
    expect(undoApply(journalDir, applyId!).state).toBe("undone");
    for (const n of names) expect(readFileSync(join(root, n), "utf8")).toBe("o".repeat(32 * 1024));
  });
});
