import { formatBytes } from "../format-bytes.ts";
import { type StatsFs, statfsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/** One file an apply is about to write: where, and its size before (0 when absent) and after (0 when deleted). */
export interface SpaceNeed {
  real: string;
  beforeSize: number;
  afterSize: number;
}

/** Space the operation takes besides its files, in `dir` (which may not exist yet): e.g. the apply's journal entry. */
export interface ExtraSpace {
  dir: string;
  bytes: number;
  /** Files and directories it creates. */
  inodes: number;
}

/**
 * Why the file systems cannot hold the apply, or null when they can. Per file system
 * (files grouped by the device of their nearest existing directory) the apply needs
 * the growth of every file, in whole blocks, plus room for the largest temporary file
 * (an atomic write holds the old and the new content until its rename), which is
 * also what a rollback needs to restore a file; and an inode per new file and
 * directory; plus `extras` (the journal) on the file systems they go to. Checked before the first write, so a full disk refuses the apply whole
 * instead of failing it half-way. Where the file system cannot be asked, null.
 */
export function spaceProblem(
  files: readonly SpaceNeed[],
  createdDirs: readonly string[],
  extras: readonly ExtraSpace[] = [],
): string | null {
  type Group = { dir: string; bytes: number; largest: number; inodes: number };
  const groups = new Map<number, Group>();
  // Many files share few directories: each is looked at once.
  const byParent = new Map<string, Group | null>();
  const groupOf = (path: string): Group | null => {
    const parent = dirname(path);
    if (byParent.has(parent)) return byParent.get(parent)!;
    let g: Group | null = null;
    const dir = existingDir(path);
    if (dir !== null) {
      try {
        const dev = statSync(dir).dev;
        g = groups.get(dev) ?? null;
        if (!g) groups.set(dev, (g = { dir, bytes: 0, largest: 0, inodes: 0 }));
      } catch {
        // Gone or unreadable: its bytes cannot be counted against any disk.
        g = null;
      }
    }
    byParent.set(parent, g);
    return g;
  };
  for (const f of files) {
    const g = groupOf(f.real);
    if (!g) continue;
    g.bytes += Math.max(0, f.afterSize - f.beforeSize);
    g.largest = Math.max(g.largest, f.afterSize, f.beforeSize);
    if (f.beforeSize === 0 && f.afterSize > 0) g.inodes += 1;
  }
  for (const d of createdDirs) {
    const g = groupOf(d);
    if (g) g.inodes += 1;
  }
  // The journal is written whole before the first file: where it shares a file system with them, it comes out of the same space.
  for (const e of extras) {
    const g = groupOf(join(e.dir, "entry"));
    if (!g) continue;
    g.bytes += e.bytes;
    g.inodes += e.inodes;
  }
  for (const g of groups.values()) {
    let fs;
    try {
      fs = statfsSync(g.dir);
    } catch {
      // A file system that cannot be asked: no figure for it rather than a wrong one.
      continue;
    }
    const block = blockSize(fs);
    const round = (n: number) => Math.ceil(n / block) * block;
    // A margin of one block per file for rounding and metadata.
    const need = round(g.bytes) + round(g.largest) + block * (files.length + g.inodes);
    const free = freeOf(fs);
    if (need > free) {
      return `the file system of ${g.dir} has ${formatBytes(free)} free and the apply needs about ${formatBytes(need)} (the new content and room to write each file safely)`;
    }
    if (fs.files > 0 && g.inodes + 1 > fs.ffree) {
      return `the file system of ${g.dir} has ${fs.ffree} free inodes and the apply creates ${g.inodes} files and directories`;
    }
  }
  return null;
}

/** Bytes this process may still write on the file system holding `dir`; null where it cannot be asked. */
export function bytesFree(dir: string): number | null {
  try {
    return freeOf(statfsSync(dir));
  } catch {
    // A file system that cannot be asked: null, which callers read as unknown, never as room.
    return null;
  }
}

function blockSize(fs: StatsFs): number {
  return fs.bsize > 0 ? fs.bsize : 4096;
}

/** Root may write into the blocks reserved for it; anyone else only into the available ones. */
function freeOf(fs: StatsFs): number {
  return (process.getuid?.() === 0 ? fs.bfree : fs.bavail) * blockSize(fs);
}

/** The nearest directory at or above `path`'s parent that exists, or null. */
function existingDir(path: string): string | null {
  let dir = dirname(path);
  for (;;) {
    try {
      if (statSync(dir).isDirectory()) return dir;
    } catch {
      // Missing: go up.
    }
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}
