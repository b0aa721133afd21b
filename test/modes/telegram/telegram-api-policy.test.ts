import { describe, expect, test } from "bun:test";
import { HttpError } from "grammy";
import {
  backoffSeconds,
  delivers,
  networkRetry,
  neverSent,
  NETWORK_RETRIES,
} from "../../../modes/telegram/api-retries.ts";
import { DEFAULT_TIMEOUTS, deadlineOf, longestCall } from "../../../modes/telegram/api-timeouts.ts";

/** A network error as grammY raises it, around the platform's error with `code`. */
const netError = (code: string) =>
  new HttpError("Network request failed!", Object.assign(new TypeError(code), { code }));

describe("telegram API policy: deadlines and waits", () => {
  test.each([
    ["getUpdates", { timeout: 30 }, 40],
    ["getUpdates", { offset: 5, limit: 1 }, 10], // the confirming call when the bot stops: no long poll
    ["getUpdates", { timeout: "x" }, 10],
    ["sendMessage", { text: "hi" }, 30],
    ["answerCallbackQuery", {}, 30],
    ["sendDocument", {}, 120],
  ] as const)("%s %j gets %d s", (method, payload, seconds) => {
    expect(deadlineOf(DEFAULT_TIMEOUTS, method, payload)).toBe(seconds);
  });

  test("grammY's own client timeout is the longest deadline, far below its 500 s default", () => {
    expect(longestCall(DEFAULT_TIMEOUTS)).toBe(120);
  });

  test("the backoff doubles from the base and never passes the cap", () => {
    expect([0, 1, 2, 3, 4, 5, 20].map((n) => backoffSeconds(DEFAULT_TIMEOUTS, n))).toEqual([1, 2, 4, 8, 15, 15, 15]);
  });
});

describe("telegram API policy: what may be sent again", () => {
  test.each([
    ["sendMessage", true],
    ["sendDocument", true],
    ["copyMessage", true],
    ["forwardMessage", true],
    ["sendChatAction", false],
    ["editMessageText", false],
    ["answerCallbackQuery", false],
    ["getUpdates", false],
  ] as const)("%s delivers something new: %p", (method, expected) => {
    expect(delivers(method)).toBe(expected);
  });

  test.each([
    ["ECONNREFUSED", true],
    ["ENOTFOUND", true],
    ["ECONNRESET", false],
    ["ETIMEDOUT", false],
  ] as const)("a %s proves the request never reached Telegram: %p", (code, expected) => {
    expect(neverSent(netError(code))).toBe(expected);
  });

  const quick = { ...DEFAULT_TIMEOUTS, retryBaseSeconds: 0.001, retryCapSeconds: 0.001 };
  /** Runs `method` through networkRetry against a server that fails with `code` `failures` times, then answers. */
  async function attempts(method: string, code: string, failures: number): Promise<{ tries: number; ok: boolean }> {
    let tries = 0;
    const prev = async () => {
      tries += 1;
      if (tries <= failures) throw netError(code);
      return { ok: true as const, result: true };
    };
    const call = networkRetry(quick) as unknown as (
      prev: unknown,
      method: string,
      payload: unknown,
    ) => Promise<unknown>;
    const ok = await call(prev, method, {}).then(
      () => true,
      () => false,
    );
    return { tries, ok };
  }

  test("a message whose connection was reset is not sent again (it may have arrived); one refused is", async () => {
    expect(await attempts("sendMessage", "ECONNRESET", 1)).toEqual({ tries: 1, ok: false });
    expect(await attempts("sendMessage", "ECONNREFUSED", 2)).toEqual({ tries: 3, ok: true });
  });

  test("an edit is tried again after any network error, a bounded number of times", async () => {
    expect(await attempts("editMessageText", "ECONNRESET", 2)).toEqual({ tries: 3, ok: true });
    expect(await attempts("editMessageText", "ECONNRESET", 100)).toEqual({ tries: NETWORK_RETRIES + 1, ok: false });
  });
});
