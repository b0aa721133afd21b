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
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { faultPoint } from "./fault-point.ts";
import { processAlive, procStat, startTimeOf } from "./process-alive.ts";
import { howToStop, waitClock } from "./wait-notice.ts";

/**
 * A lock file that names the process holding it (the workspace's apply lock, the brain's database).
 * It is stale, and taken over, when that process is gone or its pid now belongs to a process started at
 * another time (pid reuse after kill -9), so no crash leaves anything locked. The file is made whole
 * before it appears (written aside, then hard-linked into place), so a reader never sees a half-written
 * holder.
 */

/** Who holds a pid lock, as written in its file (a lock may add fields of its own, e.g. the operation). */
export interface PidLockHolder {
  pid: number;
  /** The process's start time as the kernel reports it (Linux: clock ticks after boot), or null where it cannot be read. */
  start: string | null;
  host: string;
}

/** A lock file as read: its exact text, and its holder (null: not a lock Pencil wrote, e.g. truncated or an old format). */
export interface SeenPidLock<H extends PidLockHolder> {
  text: string;
  holder: H | null;
}

/** A breaker (see breakStale) older than this was left by a process killed while breaking a stale lock. */
const BREAKER_STALE_MS = 5_000;

/** This process as a lock's holder: its pid, start time and host. */
export function thisProcess(): PidLockHolder {
  return { pid: process.pid, start: startTimeOf(process.pid), host: hostname() };
}

/** The lock's text, written whole beside the lock file (linked into place by tryPidLock); removed by the caller. */
function writeAside(file: string, holder: PidLockHolder): { aside: string; text: string } {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const text = `${JSON.stringify(holder)}\n`;
  const aside = `${file}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(aside, text, { mode: 0o600 });
  return { aside, text };
}

/**
 * One attempt at the lock: links the aside file into place (breaking a stale lock on the way) and returns
 * true, or returns the live holder that has it. Errors other than "already there" are thrown as they are.
 */
function tryPidLock<H extends PidLockHolder>(file: string, aside: string): true | { heldBy: H } {
  for (;;) {
    try {
      linkSync(aside, file);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const seen = readPidLock<H>(file);
    if (seen === null) continue; // released meanwhile
    if (isStale(seen.holder)) {
      breakStale(file, seen.text);
      continue;
    }
    return { heldBy: seen.holder! };
  }
}

/** What a wait longer than a second says (core/wait-notice.ts): the holder, and `stop`, how to stop the wait (a sentence, capitalised). */
export type DescribeWait<H extends PidLockHolder> = (holder: H, stop: string) => string;

/**
 * Takes the lock, waiting synchronously (up to `waitMs`) while a live process holds it; throws what
 * `busy` makes of the holder when the wait runs out. Returns the text written, for releasePidLock.
 * A wait longer than a second is told with `describe`.
 */
export function takePidLock<H extends PidLockHolder>(
  file: string,
  holder: H,
  waitMs: number,
  busy: (holder: H) => Error,
  describe?: DescribeWait<H>,
): string {
  const deadline = Date.now() + waitMs;
  let waited = false;
  let seen: H | null = null;
  const tick = waitClock(() => describe!(seen!, howToStop(waitMs, true)));
  const { aside, text } = writeAside(file, holder);
  try {
    for (;;) {
      const got = tryPidLock<H>(file, aside);
      if (got === true) return text;
      if (!waited) {
        waited = true;
        faultPoint("lock-wait", file);
      }
      if (Date.now() > deadline) throw busy(got.heldBy);
      seen = got.heldBy;
      if (describe) tick();
      sleepSync(25);
    }
  } finally {
    unlinkQuietly(aside);
  }
}

/** takePidLock without blocking the event loop while it waits (a bot goes on answering meanwhile). */
export async function takePidLockAsync<H extends PidLockHolder>(
  file: string,
  holder: H,
  waitMs: number,
  busy: (holder: H) => Error,
  describe?: DescribeWait<H>,
): Promise<string> {
  const deadline = Date.now() + waitMs;
  let seen: H | null = null;
  const tick = waitClock(() => describe!(seen!, howToStop(waitMs, false)));
  const { aside, text } = writeAside(file, holder);
  try {
    for (;;) {
      const got = tryPidLock<H>(file, aside);
      if (got === true) return text;
      if (Date.now() > deadline) throw busy(got.heldBy);
      seen = got.heldBy;
      if (describe) tick();
      await Bun.sleep(50);
    }
  } finally {
    unlinkQuietly(aside);
  }
}

/**
 * Waits, without blocking the event loop, until no live process holds the lock; throws what `busy` makes
 * of the holder when `waitMs` runs out. It takes nothing: it only keeps a later synchronous wait short.
 */
export async function pidLockReleased<H extends PidLockHolder>(
  file: string,
  waitMs: number,
  busy: (holder: H) => Error,
  describe?: DescribeWait<H>,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  let holder: H | null = null;
  const tick = waitClock(() => describe!(holder!, howToStop(waitMs, false)));
  for (;;) {
    const seen = readPidLock<H>(file);
    if (seen === null || isStale(seen.holder)) return;
    if (Date.now() > deadline) throw busy(seen.holder!);
    holder = seen.holder;
    if (describe) tick();
    await Bun.sleep(25);
  }
}

/** True while a live process holds the lock. */
export function pidLockHeld(file: string): boolean {
  const seen = readPidLock(file);
  return seen !== null && !isStale(seen.holder);
}

/** Removes the lock if it is still ours (a lock broken as stale and taken by another is not removed). */
export function releasePidLock(file: string, mine: string): void {
  if (readPidLock(file)?.text === mine) unlinkQuietly(file);
}

/** The lock file's text and holder, or null when there is no lock. */
export function readPidLock<H extends PidLockHolder>(file: string): SeenPidLock<H> | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<PidLockHolder>;
    if (
      typeof parsed.pid === "number" &&
      Number.isInteger(parsed.pid) &&
      parsed.pid > 0 &&
      typeof parsed.host === "string"
    ) {
      return { text, holder: parsed as H };
    }
  } catch {
    // Unreadable: judged stale (Pencil only ever links a whole file into place).
  }
  return { text, holder: null };
}

/** True when the holder cannot be running any more: damaged lock, dead pid, or a pid reused by a process started at another time. */
export function isStale(holder: PidLockHolder | null): boolean {
  if (holder === null) return true;
  // A process on another host cannot be checked from here: never taken over.
  if (holder.host !== hostname()) return false;
  if (!processAlive(holder.pid)) return true;
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
    sleepSync(5);
    return;
  }
  try {
    writeSync(fd, String(process.pid));
    if (readPidLock(file)?.text === staleText) unlinkQuietly(file);
  } finally {
    closeSync(fd);
    unlinkQuietly(breaker);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
