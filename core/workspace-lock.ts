import { join } from "node:path";
import { sha256 } from "./hash.ts";
import {
  type PidLockHolder,
  pidLockHeld,
  pidLockReleased,
  releasePidLock,
  takePidLock,
  thisProcess,
} from "./pid-lock.ts";
import { LockBusyError } from "./errors/lock-busy-error.ts";

/**
 * One lock per workspace under `$PENCIL_HOME/locks`, held while an apply, an undo or
 * a recovery writes the workspace's files, so two front ends (two terminals, the
 * terminal and the bot) never write the same changeset at once. It is a pid lock
 * (core/pid-lock.ts): it names its holder, and a holder that is gone leaves it stale.
 */

/** Who holds a workspace lock, as written in the lock file. */
interface LockHolder extends PidLockHolder {
  /** What the holder does: `apply`, `undo`, `recover`. */
  op: string;
  workspace: string;
  since: string;
}

/** How long a second apply waits for the first (an apply of 1,000 files takes well under a second). */
const DEFAULT_WAIT_MS = 60_000;

/**
 * Runs `fn` holding the lock of `workspace`, waiting (synchronously, up to `waitMs`)
 * while a live process holds it. Throws LockBusyError when the wait runs out.
 */
export function withWorkspaceLock<T>(
  pencilHome: string,
  workspace: string,
  op: string,
  fn: () => T,
  waitMs = DEFAULT_WAIT_MS,
): T {
  const file = lockFileOf(pencilHome, workspace);
  const holder: LockHolder = { ...thisProcess(), op, workspace, since: new Date().toISOString() };
  const mine = takePidLock(
    file,
    holder,
    waitMs,
    (h) => busy(file, h),
    (h, stop) => waitingFor(file, h, stop),
  );
  try {
    return fn();
  } finally {
    releasePidLock(file, mine);
  }
}

/**
 * Waits, without blocking the event loop, until no live process holds the lock of
 * `workspace` (a bot must go on answering while another process applies); throws
 * LockBusyError, naming the holder, when `waitMs` runs out. Taking the lock is still
 * withWorkspaceLock's: this only keeps its synchronous wait short.
 */
export async function lockReleased(pencilHome: string, workspace: string, waitMs = DEFAULT_WAIT_MS): Promise<void> {
  const file = lockFileOf(pencilHome, workspace);
  await pidLockReleased<LockHolder>(
    file,
    waitMs,
    (h) => busy(file, h),
    (h, stop) => waitingFor(file, h, stop),
  );
}

/** The line a long wait for the lock shows: who holds it, what it does, how to stop, and what to do if it is stale. */
function waitingFor(file: string, h: LockHolder, stop: string): string {
  return (
    `Waiting for another Pencil process (pid ${h.pid} on ${h.host}, ${h.op} since ${h.since}) to finish writing files of ${h.workspace}; nothing is written meanwhile. ` +
    `${stop}; if no Pencil process is running, remove ${file}.`
  );
}

function busy(file: string, h: LockHolder): LockBusyError {
  return new LockBusyError(
    `Another Pencil process (pid ${h.pid} on ${h.host}, ${h.op} since ${h.since}) is writing files of ${h.workspace}; nothing was written. ` +
      `Try again when it is done. If no Pencil process is running, remove ${file}.`,
  );
}

/** True while a live process holds the workspace's lock (an apply or undo in progress, not an interrupted one). */
export function lockHeld(pencilHome: string, workspace: string): boolean {
  return pidLockHeld(lockFileOf(pencilHome, workspace));
}

/** The lock file of a workspace. */
export function lockFileOf(pencilHome: string, workspace: string): string {
  return join(pencilHome, "locks", `${sha256(workspace).slice(0, 16)}.lock`);
}
