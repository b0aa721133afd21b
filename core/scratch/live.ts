import { lstatSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { processAlive } from "../process-alive.ts";

/**
 * Scratch directories are named `pencil-run-<pid>-<pid namespace>-XXXXXX`, so
 * one left behind by a process that died without cleaning up (a crash, a
 * SIGKILL) can be recognised and removed by the next Pencil that makes one
 * in the same place.
 */
const PREFIX = "pencil-run-";

/** The inode of this process's pid namespace: a pid means this process only within it (containers share /tmp). */
function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "0";
  } catch {
    // No pid namespace to read: one shared name for this process's scratches.
    return "0";
  }
}

const NS = pidNamespace();

/** The mkdtemp prefix of this process's scratch directories. */
export function scratchPrefix(): string {
  return `${PREFIX}${process.pid}-${NS}-`;
}

const live = new Set<string>();
let hooked = false;
const swept = new Set<string>();

/** Registers a scratch directory to be removed when the process exits, whatever ends it short of a kill. */
export function trackScratch(root: string): void {
  live.add(root);
  if (hooked) return;
  hooked = true;
  // Synchronous, as an exit handler must be: what is left in the temp dir would hold the workspace's files.
  process.on("exit", () => {
    for (const dir of live) {
      // A removal still running in the background may race this one: tried again; never an error at exit.
      for (let i = 0; i < 3; i++) {
        try {
          rmSync(dir, { recursive: true, force: true });
          break;
        } catch {
          // tried again
        }
      }
    }
  });
}

/** Forgets a scratch directory that was removed. */
export function untrackScratch(root: string): void {
  live.delete(root);
}

/**
 * Removes, once per process and parent, the scratch directories of dead
 * Pencil processes: named by this prefix scheme, in this pid namespace,
 * owned by this user, real directories (never a link), and whose process no
 * longer exists. Anything it cannot judge is left alone.
 */
export function sweepStaleScratches(parent: string): number {
  if (swept.has(parent) || NS === "0") return 0;
  swept.add(parent);
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    // No parent directory to sweep: no stale scratches in it.
    return 0;
  }
  const uid = process.getuid?.();
  let removed = 0;
  for (const name of names) {
    const m = /^pencil-run-(\d+)-(\d+)-[A-Za-z0-9]{6}$/.exec(name);
    if (!m || m[2] !== NS || Number(m[1]) === process.pid || processAlive(Number(m[1]))) continue;
    const path = join(parent, name);
    try {
      const st = lstatSync(path);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      rmSync(path, { recursive: true, force: true });
      removed++;
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}
