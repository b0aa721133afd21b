import { releasePidLock, takePidLockAsync, thisProcess } from "../core/pid-lock.ts";
import { BrainStoreError } from "../core/errors/brain-store-error.ts";

/**
 * One process at a time in the embedded database: PGlite has no locking of its own,
 * and two writers would corrupt it. The lock is a pid lock (core/pid-lock.ts): a lock
 * whose process is gone is taken over. Waits up to `waitMs` for a live owner.
 */
export async function acquireBrainLock(path: string, waitMs = 15_000): Promise<() => void> {
  let mine: string;
  try {
    mine = await takePidLockAsync(
      path,
      thisProcess(),
      waitMs,
      (owner) =>
        new BrainStoreError(
          `The brain is in use by another Pencil process (pid ${owner.pid}, lock ${path}). Try again when it is done; if no Pencil is running, delete the lock file.`,
        ),
      (owner, stop) =>
        `Waiting for the brain: another Pencil process (pid ${owner.pid}) is using it (lock ${path}). ${stop}; if no Pencil process is running, delete the lock file.`,
    );
  } catch (error) {
    if (BrainStoreError.isInstance(error)) throw error;
    throw new BrainStoreError(
      `Cannot create the brain's lock file ${path}: ${(error as Error).message}. Check that PENCIL_HOME is writable.`,
    );
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      releasePidLock(path, mine);
    } catch {
      // already gone, or no longer readable: not ours to remove
    }
  };
}
