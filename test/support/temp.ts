import { spawn } from "node:child_process";
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from "node:fs";
import { freemem, tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Directories in memory (memoryTempDir's) that this process made and has not removed yet. */
const inMemory: string[] = [];
/** Directories on disk (tempDir's) that this process made and has not yet handed to the remover. */
const onDisk: string[] = [];
/** The file that lists, NUL-separated, the disk directories the remover deletes once this process has exited. */
let leftovers: string | undefined;

/**
 * Removes the directories in memory that this process made, and hands the ones on disk to a remover that deletes them
 * once this test process has exited; test/support/cleanup.ts runs it after every test file. Why later: the machine's
 * ext4 has no journal, and on such a file system the kernel will not reuse an inode freed in the last one to five
 * minutes, so every file a later test creates first walks past all the inodes deleted before it. Deleting each file's
 * trees mid-run made the creations of the files after it cost more system time than the deletions themselves.
 */
export function removeTempDirs(): void {
  for (const dir of inMemory.splice(0)) rmSync(dir, { recursive: true, force: true });
  const dirs = onDisk.splice(0);
  if (dirs.length === 0) return;
  try {
    leftovers ??= startRemover();
    appendFileSync(leftovers, dirs.map((dir) => `${dir}\0`).join(""));
  } catch {
    // No remover (no sh, or no room to list them): remove them now, as before.
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts the remover: a shell, detached from this process and from the run's output, that waits for this process to
 * exit (Bun's test runner exits without running exit handlers) and then deletes every directory listed in its file.
 */
function startRemover(): string {
  const list = join(mkdtempSync(join(tmpdir(), "pencil-test-leftovers-")), "dirs");
  writeFileSync(list, "");
  const script = 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; xargs -0 rm -rf -- < "$2"; rm -rf -- "${2%/*}"';
  const remover = spawn("sh", ["-c", script, "pencil-test-remover", String(process.pid), list], {
    detached: true,
    stdio: "ignore",
  });
  remover.unref();
  return list;
}

/** A fresh temporary directory on disk, removed once the test process has exited. */
export function tempDir(prefix = "pencil-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onDisk.push(dir);
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
  inMemory.push(dir);
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
