import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { freemem, tmpdir } from "node:os";
import { dirname, join } from "node:path";
const made: string[] = [];

/** Removes every directory tempDir made; test/support/cleanup.ts runs it after all test files. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A fresh temporary directory, removed after the test file. */
export function tempDir(prefix = "pencil-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Linux's memory-backed temporary space, shared by every program on the machine. */
const SHM = "/dev/shm";

/**
 * A fresh temporary directory in memory (Linux's /dev/shm) when it is a tmpfs that runs programs and has `bytes` to
 * spare, in space and in memory; tempDir's otherwise. For the packaging tests, which unpack and later delete hundreds
 * of MiB in thousands of files: a disk filesystem pays for each file's inode twice, and on a busy ext4 that costs more
 * CPU than the install itself. Not for a workspace or a home: the sandbox puts an empty /dev/shm in front of this one.
 */
export function memoryTempDir(prefix: string, bytes: number): string {
  if (!memoryHasRoom(bytes)) return tempDir(prefix);
  const dir = mkdtempSync(join(SHM, prefix));
  made.push(dir);
  return dir;
}

function memoryHasRoom(bytes: number): boolean {
  if (process.platform !== "linux") return false;
  try {
    // The last mount on /dev/shm is the one in use; noexec would stop the installed programs from running.
    const mount = readFileSync("/proc/mounts", "utf8")
      .split("\n")
      .map((line) => line.split(" "))
      .findLast((fields) => fields[1] === SHM);
    if (mount?.[2] !== "tmpfs" || mount[3]?.split(",").includes("noexec")) return false;
    const fs = statfsSync(SHM);
    return fs.bavail * fs.bsize >= bytes && freemem() >= 2 * bytes;
  } catch {
    // No /proc or no /dev/shm: the disk it is.
    return false;
  }
}

/** tempDir by its real path (no link on the way, as the sandbox and the policy see it), removed with the others. */
export function realTempDir(prefix?: string): string {
  return realpathSync(tempDir(prefix));
}

/** Writes a tree of files (path → content) under `root`, creating parents. */
export function writeTree(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}
