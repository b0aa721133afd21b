import { lstatSync, readdirSync, writeFileSync, type Stats } from "node:fs";
import { join } from "node:path";
import { inDir } from "./in-dir.ts";
import type { EntrySig, Scratch } from "./types.ts";

/**
 * Kernel timestamps tick coarsely (a few ms): a write in the same tick as the
 * copy would leave ctime unchanged. Waits until a fresh ctime is past every
 * ctime of the baseline, so any write by the command moves the ctime.
 */
export function settleClock(s: Scratch): void {
  let newest = 0;
  for (const sig of s.baseline.values()) if (sig.ctimeMs > newest) newest = sig.ctimeMs;
  const marker = join(s.root, "clock");
  const deadline = performance.now() + 1000;
  for (;;) {
    writeFileSync(marker, "");
    if (lstatSync(marker).ctimeMs > newest || performance.now() > deadline) return;
    Bun.sleepSync(1);
  }
}

/**
 * Records every non-directory entry below `dir` by relative path. Links are
 * recorded, never followed: a directory that became a link is entered by
 * descriptor or not at all. Directories that cannot be opened or listed (a
 * command's chmod 000) are added to `unreadable` by relative path: what they
 * hold is not recorded. False when `dir` itself is not a directory.
 */
export function recordTree(dir: string, into: Map<string, EntrySig>, unreadable: string[] = []): boolean {
  const walk = (path: string, rel: string): boolean =>
    inDir(path, (at) => {
      let entries;
      try {
        entries = readdirSync(at, { withFileTypes: true });
      } catch {
        // Unreadable: recorded as such, so the diff stops on it instead of taking it for empty.
        unreadable.push(rel);
        return;
      }
      for (const e of entries) {
        const childRel = rel === "" ? e.name : `${rel}/${e.name}`;
        const child = join(at, e.name);
        if (e.isDirectory() && walk(child, childRel)) continue;
        let st: Stats;
        try {
          st = lstatSync(child);
        } catch {
          // Gone meanwhile: not part of the baseline.
          continue;
        }
        if (st.isDirectory()) {
          // A directory that could not be entered: its entries are unknown, not gone.
          unreadable.push(childRel);
          continue;
        }
        into.set(childRel, entrySig(st));
      }
    });
  return walk(dir, "");
}

/** Fingerprints every entry below `dir` (itself included; links not followed) into `into`, by absolute path. */
export function fingerprint(dir: string, into: Map<string, string>): void {
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let st: Stats;
    try {
      st = lstatSync(current);
    } catch {
      // Gone meanwhile: nothing to print.
      continue;
    }
    into.set(current, `${st.mode}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`);
    if (!st.isDirectory()) continue;
    try {
      for (const name of readdirSync(current)) stack.push(join(current, name));
    } catch {
      // unreadable: its fingerprint above still catches entries added or removed
    }
  }
}

/** What the diff compares of a file, link or other entry (not a directory): identity, size, mode and times. */
export function entrySig(st: Stats): EntrySig {
  return {
    kind: st.isFile() ? "file" : st.isSymbolicLink() ? "link" : "other",
    dev: st.dev,
    ino: st.ino,
    size: st.size,
    mode: st.mode & 0o7777,
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs,
  };
}
