import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { faultPoint } from "./fault-point.ts";
import { sha256 } from "./hash.ts";
import { PencilError } from "./errors.ts";

/**
 * One lock per workspace under `$PENCIL_HOME/locks`, held while an apply, an undo or
 * a recovery writes the workspace's files, so two front ends (two terminals, the
 * terminal and the bot) never write the same changeset at once. The lock file names
 * its holder: pid, the process's start time and the host. It is stale, and taken
 * over, when that process is gone or the pid now belongs to a process started at
 * another time (pid reuse after kill -9), so no crash leaves the workspace locked.
 * The file is made whole before it appears (written aside, then hard-linked into
 * place), so a reader never sees a half-written holder.
 */

/** Who holds a workspace lock, as written in the lock file. */
export interface LockHolder {
  pid: number;
  /** The process's start time as the kernel reports it (Linux: clock ticks after boot), or null where it cannot be read. */
  start: string | null;
  host: string;
  /** What the holder does: `apply`, `undo`, `recover`. */
  op: string;
  workspace: string;
  since: string;
}

/** The workspace lock stayed held by a live process for longer than the wait allowed; the message names the holder and the file. */
export class LockBusyError extends PencilError {
  override name = "LockBusyError";
}

/** How long a second apply waits for the first (an apply of 1,000 files takes well under a second). */
const DEFAULT_WAIT_MS = 60_000;
/** A breaker (see breakStale) older than this was left by a process killed while breaking a stale lock. */
const BREAKER_STALE_MS = 5_000;

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
  const mine = acquire(
    file,
    {
      pid: process.pid,
      start: startTimeOf(process.pid),
      host: hostname(),
      op,
      workspace,
      since: new Date().toISOString(),
    },
    waitMs,
  );
  try {
    return fn();
  } finally {
    release(file, mine);
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
  const deadline = Date.now() + waitMs;
  for (;;) {
    const seen = readLock(file);
    if (seen === null || isStale(seen.holder)) return;
    if (Date.now() > deadline) throw busy(file, seen.holder!);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function busy(file: string, h: LockHolder): LockBusyError {
  return new LockBusyError(
    `Another Pencil process (pid ${h.pid} on ${h.host}, ${h.op} since ${h.since}) is writing files of ${h.workspace}; nothing was written. ` +
      `Try again when it is done. If no Pencil process is running, remove ${file}.`,
  );
}

/** True while a live process holds the workspace's lock (an apply or undo in progress, not an interrupted one). */
export function lockHeld(pencilHome: string, workspace: string): boolean {
  const seen = readLock(lockFileOf(pencilHome, workspace));
  return seen !== null && !isStale(seen.holder);
}

/** The lock file of a workspace. */
export function lockFileOf(pencilHome: string, workspace: string): string {
  return join(pencilHome, "locks", `${sha256(workspace).slice(0, 16)}.lock`);
}

function acquire(file: string, holder: LockHolder, waitMs: number): string {
  mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
  const text = `${JSON.stringify(holder)}\n`;
  const aside = `${file}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(aside, text, { mode: 0o600 });
  const deadline = Date.now() + waitMs;
  let waited = false;
  try {
    for (;;) {
      try {
        linkSync(aside, file);
        return text;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const seen = readLock(file);
      if (seen === null) continue; // released meanwhile
      if (isStale(seen.holder)) {
        breakStale(file, seen.text);
        continue;
      }
      if (!waited) {
        waited = true;
        faultPoint("lock-wait", file);
      }
      if (Date.now() > deadline) throw busy(file, seen.holder!);
      sleep(25);
    }
  } finally {
    unlinkQuietly(aside);
  }
}

/** Removes the lock if it is still ours (a lock broken as stale and taken by another is not removed). */
function release(file: string, mine: string): void {
  if (readLock(file)?.text === mine) unlinkQuietly(file);
}

/** The lock file's text and holder (null holder: not a lock Pencil wrote, e.g. truncated), or null when there is no lock. */
function readLock(file: string): { text: string; holder: LockHolder | null } | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockHolder>;
    if (
      typeof parsed.pid === "number" &&
      Number.isInteger(parsed.pid) &&
      parsed.pid > 0 &&
      typeof parsed.host === "string"
    ) {
      return { text, holder: parsed as LockHolder };
    }
  } catch {
    // Unreadable: judged stale below (Pencil only ever links a whole file into place).
  }
  return { text, holder: null };
}

/** True when the holder cannot be running any more: damaged lock, dead pid, or a pid reused by a process started at another time. */
export function isStale(holder: LockHolder | null): boolean {
  if (holder === null) return true;
  // A process on another host cannot be checked from here: never taken over.
  if (holder.host !== hostname()) return false;
  if (!alive(holder.pid)) return true;
  const stat = procStat(holder.pid);
  // A zombie (killed, not yet reaped by its parent) holds nothing any more.
  if (stat?.[0] === "Z") return true;
  const start = stat?.[19] ?? null;
  return holder.start !== null && start !== null && start !== holder.start;
}

/**
 * Removes a stale lock, unless it changed since it was judged: a short-lived breaker
 * file makes sure two processes breaking the same stale lock never remove a fresh
 * one the first of them took meanwhile.
 */
function breakStale(file: string, staleText: string): void {
  const breaker = `${file}.break`;
  let fd: number;
  try {
    fd = openSync(breaker, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    try {
      if (Date.now() - statSync(breaker).mtimeMs > BREAKER_STALE_MS) unlinkQuietly(breaker);
    } catch {
      // Gone meanwhile.
    }
    sleep(5);
    return;
  }
  try {
    writeSync(fd, String(process.pid));
    if (readLock(file)?.text === staleText) unlinkQuietly(file);
  } finally {
    closeSync(fd);
    unlinkQuietly(breaker);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A process's start time from /proc (field 22 of /proc/PID/stat), or null where there is no /proc. */
export function startTimeOf(pid: number): string | null {
  return procStat(pid)?.[19] ?? null;
}

/** The fields of /proc/PID/stat from field 3 (the state) on, or null where there is no /proc. */
function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    // No such process (or not readable): null, the caller's 'not that process'.
    return null;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
