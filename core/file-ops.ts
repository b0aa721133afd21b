import {
  chmodSync,
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { faultPoint } from "./fault-point.ts";

/** What a stat tells the tools: kind, size, modification time and permission bits. */
export interface FileStat {
  kind: "file" | "dir" | "other";
  size: number;
  mtimeMs: number;
  /** Permission bits only (e.g. 0o755). */
  mode: number;
}

/** One directory entry; `symlink` entries are reported, never followed by walkers. */
export interface DirEntry {
  name: string;
  kind: "file" | "dir" | "symlink" | "other";
}

/** Who staged a change: the tool call, the model behind it, and the files read before it, in order. */
export interface ChangeOrigin {
  tool: string;
  callId: string;
  model: string;
  /** Workspace-relative (or absolute when outside) paths read in this session before this call, in order. */
  readsBefore: string[];
  /** What was repaired in the model's content before it was staged (a fence removed, entities read, a tolerant match), in words; absent when nothing was. */
  repairs?: string[];
}

/** Options of a write or delete; `origin` is recorded by the overlay and ignored by the disk. */
export interface WriteOptions {
  mode?: number;
  origin?: ChangeOrigin;
}

/**
 * The file operations tools are built on. Paths are real absolute paths (already
 * resolved and judged by the policy). The disk implements them directly; the
 * overlay implements them as a staged view, so the same tool code runs on both.
 */
export interface FileOps {
  /** Stat of what the path names, links followed (callers pass real paths already resolved); null when nothing is there. */
  stat(real: string): FileStat | null;
  readBytes(real: string): Uint8Array;
  readDir(real: string): DirEntry[];
  writeBytes(real: string, bytes: Uint8Array, options?: WriteOptions): void;
  remove(real: string, options?: WriteOptions): void;
}

/** FileOps on the real disk. Writes are atomic: a temporary file in the same directory, then rename. */
export class DiskFileOps implements FileOps {
  stat(real: string): FileStat | null {
    try {
      // No exception for a missing file: staging new files stats thousands of them.
      const st = statSync(real, { throwIfNoEntry: false });
      if (!st) return null;
      return {
        kind: st.isFile() ? "file" : st.isDirectory() ? "dir" : "other",
        size: st.size,
        mtimeMs: st.mtimeMs,
        mode: st.mode & 0o7777,
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") return null;
      throw error;
    }
  }

  readBytes(real: string): Uint8Array {
    return readFileSync(real);
  }

  readDir(real: string): DirEntry[] {
    return readdirSync(real, { withFileTypes: true }).map((d) => ({
      name: d.name,
      kind: d.isFile() ? "file" : d.isDirectory() ? "dir" : d.isSymbolicLink() ? "symlink" : "other",
    }));
  }

  writeBytes(real: string, bytes: Uint8Array, options: WriteOptions = {}): void {
    writeFileAtomic(real, bytes, options.mode);
  }

  remove(real: string): void {
    rmSync(real, { force: true });
  }
}

/**
 * Writes `bytes` to `target` through a temporary file in the same directory and a
 * rename, so a reader (or a crash) sees either the old file or the new one.
 * Parents are created. `mode` defaults to the existing file's mode, else 0o644.
 */
export function writeFileAtomic(target: string, bytes: Uint8Array, mode?: number, durable = false): void {
  const dir = dirname(target);
  mkdirSync(dir, { recursive: true });
  let finalMode = mode;
  if (finalMode === undefined) {
    try {
      finalMode = lstatSync(target).mode & 0o7777;
    } catch {
      // No file there yet: a new file gets the usual mode.
      finalMode = 0o644;
    }
  }
  const tmp = join(dir, `.${basename(target)}.pencil-${randomBytes(4).toString("hex")}.tmp`);
  const fd = openSync(tmp, "w", finalMode);
  try {
    try {
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      if (durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    faultPoint("atomic-write", target);
    // openSync's mode is filtered by the umask; the file must carry exactly the mode asked for
    // (one chmod, only when the umask took something away).
    if ((finalMode & ~processUmask()) !== finalMode) chmodSync(tmp, finalMode);
    renameSync(tmp, target);
  } catch (error) {
    // A failed write (a full disk, above all) must not keep what it wrote: that space may be what a rollback needs.
    rmSync(tmp, { force: true });
    throw error;
  }
}

let umask: number | undefined;

/** The process umask, read once: it does not change under Pencil. */
function processUmask(): number {
  umask ??= process.umask();
  return umask;
}
