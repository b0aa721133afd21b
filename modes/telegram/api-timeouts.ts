import { HttpError, type Transformer } from "grammy";

/** How long the bot waits on the Bot API, and how it retries; every figure in seconds. */
export interface ApiTimeouts {
  /** getUpdates long-poll timeout: Telegram holds the request this long when nothing arrives. */
  pollSeconds: number;
  /** How much longer than pollSeconds a getUpdates may take before it counts as lost. */
  pollSlackSeconds: number;
  /** Any other call without an upload. */
  callSeconds: number;
  /** A call that uploads a file (a long diff as a document). */
  uploadSeconds: number;
  /** First wait after a failed call before it is tried again; doubles on each failure in a row. */
  retryBaseSeconds: number;
  /** The longest wait between two tries: after a long outage the bot polls again within this. */
  retryCapSeconds: number;
}

/** Defaults: grammY's own client timeout (500 s) would leave a lost getUpdates unnoticed for over 8 minutes. */
export const DEFAULT_TIMEOUTS: ApiTimeouts = {
  pollSeconds: 30,
  pollSlackSeconds: 10,
  callSeconds: 30,
  uploadSeconds: 120,
  retryBaseSeconds: 1,
  retryCapSeconds: 15,
};

const UPLOADS = new Set([
  "sendDocument",
  "sendPhoto",
  "sendAudio",
  "sendVideo",
  "sendVoice",
  "sendAnimation",
  "sendMediaGroup",
]);

/** The longest any call may take; given to grammY's client as its own timeout, a backstop behind `callDeadlines`. */
export function longestCall(t: ApiTimeouts): number {
  return Math.max(t.pollSeconds + t.pollSlackSeconds, t.callSeconds, t.uploadSeconds);
}

/** The deadline of one call of `method`: a getUpdates its own long-poll timeout plus slack. */
export function deadlineOf(t: ApiTimeouts, method: string, payload: unknown): number {
  if (method === "getUpdates") {
    const timeout = Number((payload as { timeout?: unknown } | undefined)?.timeout ?? 0);
    return (Number.isFinite(timeout) && timeout > 0 ? timeout : 0) + t.pollSlackSeconds;
  }
  return UPLOADS.has(method) ? t.uploadSeconds : t.callSeconds;
}

/**
 * An API transformer giving every single request its deadline (`deadlineOf`): past
 * it the request is aborted and fails as a network error (HttpError) that says so,
 * which the retry layers above then treat like any lost connection.
 */
export function callDeadlines(t: ApiTimeouts): Transformer {
  return async (prev, method, payload, signal) => {
    const seconds = deadlineOf(t, method, payload);
    const timer = AbortSignal.timeout(Math.max(1, Math.round(seconds * 1000)));
    try {
      // grammY types signals with its polyfill's AbortSignal; at run time they are the platform's.
      const both = signal ? AbortSignal.any([signal as unknown as AbortSignal, timer]) : timer;
      return await prev(method, payload, both as unknown as typeof signal);
    } catch (error) {
      if (timer.aborted && !signal?.aborted)
        throw new HttpError(`Request to '${method}' got no answer within ${seconds} s`, error);
      throw error;
    }
  };
}
