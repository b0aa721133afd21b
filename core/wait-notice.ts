// Where Pencil waits longer than a second (a lock another process holds, the brain's database
// starting, an MCP server starting), it says what it waits on and how to stop. The layers
// below do no user I/O: they tell a listener, which the terminal installs (stderr a terminal
// only) and every other front end leaves unset. A wait that ends within the second says nothing.

/** How long a wait goes unmentioned: only one a person would notice is worth a line. */
const NOTICE_AFTER_MS = 1000;

/** Receives one line per long wait: what it waits on and how to stop it. */
export type WaitListener = (text: string) => void;

let listener: WaitListener | null = null;
let afterMs = NOTICE_AFTER_MS;

/**
 * Sends long waits' lines to `fn` from now on (`options.afterMs`: how long a wait goes unmentioned,
 * NOTICE_AFTER_MS unless a test wants every wait told); returns the function that stops it.
 */
export function tellWaitsTo(fn: WaitListener, options: { afterMs?: number } = {}): () => void {
  listener = fn;
  afterMs = options.afterMs ?? NOTICE_AFTER_MS;
  return () => {
    if (listener !== fn) return;
    listener = null;
    afterMs = NOTICE_AFTER_MS;
  };
}

/**
 * `work`, with `describe()` told once if it has not settled within a second (for a wait
 * the event loop keeps turning through: a server starting, a database opening).
 */
export async function toldIfSlow<T>(describe: () => string, work: Promise<T>): Promise<T> {
  if (!listener) return work;
  const timer = setTimeout(() => listener?.(describe()), afterMs);
  try {
    return await work;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * For a wait that polls (a lock): call the returned function on each round; the first round
 * after a second tells `describe()`, once. Works inside a synchronous loop too.
 */
export function waitClock(describe: () => string, now: () => number = Date.now): () => void {
  const started = now();
  let told = false;
  return () => {
    if (told || !listener || now() - started < afterMs) return;
    told = true;
    listener(describe());
  };
}

/**
 * How to stop a wait in this process, as a sentence to end with a period: Ctrl-C, unless a handler of Pencil's own
 * takes SIGINT, which cannot run while a synchronous wait holds the thread (then the wait's own limit ends it).
 */
export function howToStop(limitMs: number, synchronous: boolean): string {
  return synchronous && process.listenerCount("SIGINT") > 0
    ? `It gives up after ${Math.round(limitMs / 1000)} s`
    : "Ctrl-C to stop";
}
