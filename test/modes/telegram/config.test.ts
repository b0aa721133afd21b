import { describe, expect, test } from "bun:test";
import { readTelegramConfig } from "../../../modes/telegram/config.ts";
import { TelegramConfigError } from "../../../core/errors/telegram-config-error.ts";

const OWNER = 4242;
const TOKEN = "123456:TEST-token_abcdefghijklmnop";

describe("configuration", () => {
  const env = { TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_OWNER_ID: String(OWNER) };

  test("reads token, owner and API root (trailing slash dropped)", () => {
    expect(readTelegramConfig({ ...env, TELEGRAM_API_ROOT: "http://127.0.0.1:9/" })).toEqual({
      token: TOKEN,
      ownerId: OWNER,
      apiRoot: "http://127.0.0.1:9",
    });
    expect(readTelegramConfig(env).apiRoot).toBe("https://api.telegram.org");
  });

  test("missing or malformed settings fail with the variable to fix, never echoing the token", () => {
    const cases: [Record<string, string>, string][] = [
      [{ TELEGRAM_OWNER_ID: "1" }, "TELEGRAM_BOT_TOKEN is not set"],
      [{ TELEGRAM_BOT_TOKEN: "nonsense-token-value-here" }, "does not look like a bot token"],
      [{ TELEGRAM_BOT_TOKEN: TOKEN }, "TELEGRAM_OWNER_ID is not set"],
      [{ TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_OWNER_ID: "@me" }, "must be your numeric Telegram user id"],
      [{ TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_OWNER_ID: "-5" }, "must be your numeric Telegram user id"],
      [{ ...env, TELEGRAM_API_ROOT: "ftp://x" }, "http(s)"],
    ];
    for (const [vars, message] of cases) {
      let error: unknown;
      try {
        readTelegramConfig(vars);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(TelegramConfigError);
      expect((error as Error).message).toContain(message);
      expect((error as Error).message).not.toContain("TEST-token");
      expect((error as Error).message).not.toContain("nonsense-token");
    }
  });
});
