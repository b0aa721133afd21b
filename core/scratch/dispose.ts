import { chmodSync, fchmodSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { inDir } from "./in-dir.ts";
import { untrackScratch } from "./live.ts";
import type { Scratch } from "./types.ts";

/**
 * Removes the scratch directory, also where the command made parts of it
 * read-only (never following a link out of it); false when something is left.
 */
export function disposeScratch(s: Pick<Scratch, "root">): boolean {
  try {
    rmSync(s.root, { recursive: true, force: true });
  } catch {
    // A command may have left directories without write permission: give it back, then retry.
    makeWritable(s.root);
    try {
      rmSync(s.root, { recursive: true, force: true });
    } catch {
      // Not removed: false tells the caller, which tries again or reports the scratch left.
      return false;
    }
  }
  untrackScratch(s.root);
  return true;
}

/**
 * Gives permission back to every real directory below `dir`, by descriptor: links are never followed, so nothing
 * outside is chmodded. A directory that cannot be opened at all (mode 000) is chmodded by its name in its parent,
 * opened by descriptor, once lstat says it is a directory: nothing that ran in the scratch is still running.
 */
function makeWritable(dir: string): void {
  inDir(dir, (at, fd) => {
    try {
      fchmodSync(fd, 0o700);
      for (const e of readdirSync(at, { withFileTypes: true })) {
        if (!e.isDirectory()) continue;
        const child = join(at, e.name);
        try {
          if (lstatSync(child).isDirectory()) chmodSync(child, 0o700);
        } catch {
          // gone meanwhile
        }
        makeWritable(child);
      }
    } catch {
      // best effort: rmSync reports what is left
    }
  });
}
