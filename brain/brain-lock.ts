import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { BrainStoreError } from "./store.ts";

/**
 * One process at a time in the embedded database: PGlite has no locking of its own,
 * and two writers would corrupt it. The lock file holds the owner's pid; a lock
 * whose process is gone is taken over. Waits up to `waitMs` for a live owner.
 */
export async function acquireBrainLock(path: string, waitMs = 15_000): Promise<() => void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          if (readFileSync(path, "utf8") === String(process.pid)) unlinkSync(path);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new BrainStoreError(
          `Cannot create the brain's lock file ${path}: ${(error as Error).message}. Check that PENCIL_HOME is writable.`,
        );
      }
    }
    const owner = Number.parseInt(safeRead(path), 10);
    if (!Number.isInteger(owner) || owner <= 0 || !alive(owner)) {
      try {
        unlinkSync(path);
      } catch {
        // another process took it over first
      }
      continue;
    }
    if (Date.now() > deadline) {
      throw new BrainStoreError(
        `The brain is in use by another Pencil process (pid ${owner}, lock ${path}). Try again when it is done; if no Pencil is running, delete the lock file.`,
      );
    }
    await Bun.sleep(50);
  }
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return "";
  }
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
