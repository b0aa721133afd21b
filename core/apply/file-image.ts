import { lstatSync, readdirSync, readFileSync, rmdirSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { writeFileAtomic } from "../file-ops.ts";
import { sha256 } from "../hash.ts";

/** A file's state as the journal records it: absent, or its content hash, size and permission bits. */
export type FileImage = { exists: false } | { exists: true; hash: string; size: number; mode: number };

/** What is at a real path right now: nothing, a regular file (with its bytes), or something else (directory, symlink, device). */
export type DiskFile =
  | { kind: "absent" }
  | { kind: "file"; bytes: Uint8Array; hash: string; mode: number }
  | { kind: "other"; what: string };

/** Reads what is at `real` without following a symlink at the final component. */
export function readDiskFile(real: string): DiskFile {
  let st;
  try {
    st = lstatSync(real);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "absent" };
    throw error;
  }
  if (!st.isFile()) {
    return {
      kind: "other",
      what: st.isDirectory() ? "a directory" : st.isSymbolicLink() ? "a symbolic link" : "a special file",
    };
  }
  const bytes = readFileSync(real);
  return { kind: "file", bytes, hash: sha256(bytes), mode: st.mode & 0o7777 };
}

/** The image of what is on disk; null for something that is not a regular file (no image can describe it). */
export function imageOf(disk: DiskFile): FileImage | null {
  if (disk.kind === "absent") return { exists: false };
  if (disk.kind === "other") return null;
  return { exists: true, hash: disk.hash, size: disk.bytes.length, mode: disk.mode };
}

/** True when the disk has the image's content: same existence and hash (permission bits are not compared). */
export function sameContent(image: FileImage, disk: DiskFile): boolean {
  if (!image.exists) return disk.kind === "absent";
  return disk.kind === "file" && disk.hash === image.hash;
}

/** True when the disk has the image's content and, for a file, its permission bits too. */
export function sameImage(image: FileImage, disk: DiskFile): boolean {
  if (!sameContent(image, disk)) return false;
  return !image.exists || (disk.kind === "file" && disk.mode === image.mode);
}

/**
 * Makes `real` hold `image`: an atomic write of `bytes` with the image's mode, or
 * a delete when the image is absent. `bytes` must be the image's content.
 */
export function placeImage(
  real: string,
  image: FileImage,
  bytes: Uint8Array | null,
  durable = false,
  plainDirs?: Set<string>,
): void {
  const link = linkedParent(real, plainDirs);
  if (link) {
    throw new Error(
      `its parent ${link} is now a symbolic link, so writing there could land outside the files that were reviewed`,
    );
  }
  if (!image.exists) {
    try {
      unlinkSync(real);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    return;
  }
  if (bytes === null) throw new Error(`Internal error: no content given to restore ${real}.`);
  writeFileAtomic(real, bytes, image.mode, durable);
}

/**
 * The first parent directory of `real` that is a symbolic link, or null. Journaled
 * paths are real paths (every link resolved when staged), so a link among the
 * parents means the tree was changed since, possibly to redirect the write.
 */
function linkedParent(real: string, plainDirs?: Set<string>): string | null {
  // One apply or undo touches many files in few directories: a directory whose whole
  // chain of parents was found free of links is not looked at again.
  const seen: string[] = [];
  let dir = dirname(real);
  for (;;) {
    if (plainDirs?.has(dir)) break;
    try {
      if (lstatSync(dir).isSymbolicLink()) return dir;
    } catch {
      // Missing parents are created by the write itself.
    }
    seen.push(dir);
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  for (const d of seen) plainDirs?.add(d);
  return null;
}

/** Removes the given directories, deepest first, where they are empty; a directory someone filled since is kept. */
export function removeEmptyDirs(dirs: readonly string[]): string[] {
  const removed: string[] = [];
  for (const dir of [...dirs].sort((a, b) => b.length - a.length)) {
    try {
      rmdirSync(dir);
      removed.push(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOTDIR") throw error;
    }
  }
  return removed;
}

// The temporary names writeFileAtomic (core/file-ops.ts) uses: `.<name>.pencil-<8 hex>.tmp` beside the target.
const TEMP_PATTERN = /^\.(.+)\.pencil-[0-9a-f]{8}\.tmp$/;

/** Temporary files a killed or failed atomic write left beside any of `reals` (absolute paths). */
export function tempLeftovers(reals: readonly string[]): string[] {
  const byDir = new Map<string, Set<string>>();
  for (const real of reals) {
    const dir = dirname(real);
    if (!byDir.has(dir)) byDir.set(dir, new Set());
    byDir.get(dir)!.add(basename(real));
  }
  const found: string[] = [];
  for (const [dir, names] of byDir) {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      // An unreadable directory: its files cannot be listed, so none of them is reported as found.
      continue;
    }
    for (const entry of entries) {
      const m = TEMP_PATTERN.exec(entry);
      if (m && names.has(m[1]!)) found.push(join(dir, entry));
    }
  }
  return found.sort();
}
