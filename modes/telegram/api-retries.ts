import { HttpError, type Transformer } from "grammy";
import type { ApiTimeouts } from "./api-timeouts.ts";

/** Tries of a call after a network error, besides the first (for calls that may be repeated). */
export const NETWORK_RETRIES = 4;

/** Network error codes that prove the request never left this machine or never reached the server. */
const NEVER_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "ConnectionRefused",
  "FailedToOpenSocket",
]);

/** True for a method that delivers something new to the chat: repeated after it reached Telegram, the owner gets it twice. */
export function delivers(method: string): boolean {
  return /^(send|copy|forward)/.test(method) && method !== "sendChatAction";
}

/** True when the failed request certainly never reached the Bot API (a refused or unresolvable connection). */
export function neverSent(error: HttpError): boolean {
  const code = (error.error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && NEVER_SENT.has(code);
}

/** The wait before try `failures + 1`: doubling from the base, never above the cap. */
export function backoffSeconds(t: ApiTimeouts, failures: number): number {
  return Math.min(t.retryCapSeconds, t.retryBaseSeconds * 2 ** failures);
}

/**
 * getUpdates never gives up while the bot runs: a lost connection, a 5xx, a 429 (its
 * retry_after honoured) and a 409 Conflict (another process polled with the same token
 * for a moment) are logged and tried again, waiting `backoffSeconds` — capped, so after
 * a long outage the bot listens again within the cap, not after as long again.
 * grammY's own loop would stop polling for good on a 409 and leave a live process that
 * no longer listens. Only what a retry cannot mend (401: the token was revoked) goes up
 * to grammY, which stops polling; the bot then exits (see startTelegramBot's `done`).
 */
export function pollingRetry(t: ApiTimeouts, log: (line: string) => void): Transformer {
  return async (prev, method, payload, signal) => {
    // Only the polling loop's calls (they carry its abort signal): the one that confirms the
    // last updates when the bot stops is tried once, so stopping never waits out an outage.
    if (method !== "getUpdates" || !signal) return prev(method, payload, signal);
    for (let failures = 0; ; failures += 1) {
      let why: string;
      let retryAfter: number | undefined;
      try {
        const result = await prev(method, payload, signal);
        if (result.ok || !(result.error_code === 409 || result.error_code === 429 || result.error_code >= 500)) {
          if (failures > 0) log(`polling again after ${failures} failed ${failures === 1 ? "try" : "tries"}`);
          return result;
        }
        why =
          result.error_code === 409
            ? "409 Conflict: another process polled with this bot token"
            : `${result.error_code} ${result.description}`;
        retryAfter = result.parameters?.retry_after;
      } catch (error) {
        if (signal?.aborted || !(error instanceof HttpError)) throw error;
        why = error.message;
      }
      const seconds = retryAfter ?? backoffSeconds(t, failures);
      log(`getUpdates failed (${why}); polling again in ${seconds} s`);
      await pause(seconds, signal);
    }
  };
}

/**
 * Every other call is tried again after a network error, a few times with the capped
 * backoff — except a call that delivers a message or a document, which is tried again
 * only when the error proves the request never reached Telegram: a connection reset
 * or a timeout after Telegram handled it would otherwise give the owner two copies.
 * Such a failure goes up to the caller, which treats the delivery as unknown.
 */
export function networkRetry(t: ApiTimeouts): Transformer {
  return async (prev, method, payload, signal) => {
    if (method === "getUpdates") return prev(method, payload, signal);
    for (let failures = 0; ; failures += 1) {
      try {
        return await prev(method, payload, signal);
      } catch (error) {
        if (signal?.aborted || !(error instanceof HttpError) || failures >= NETWORK_RETRIES) throw error;
        if (delivers(method) && !neverSent(error)) throw error;
        await pause(backoffSeconds(t, failures), signal);
      }
    }
  };
}

/** Applies `inner` to every method but `method`, which passes straight through. */
export function except(method: string, inner: Transformer): Transformer {
  return (prev, m, payload, signal) => (m === method ? prev(m, payload, signal) : inner(prev, m, payload, signal));
}

/** What pause needs of an abort signal (grammY types its signals with a polyfill's type). */
interface Abortable {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** Waits `seconds`; rejects at once when `signal` aborts (the bot is stopping). */
function pause(seconds: number, signal?: Abortable): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("stopped while waiting to try again"));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, seconds * 1000);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("stopped while waiting to try again"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
