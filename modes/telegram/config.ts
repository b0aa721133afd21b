import { TelegramConfigError } from "../../core/errors/telegram-config-error.ts";

/** The bot's settings, read from the environment (README "Configuration"). */
export interface TelegramConfig {
  token: string;
  /** The one Telegram user id the bot obeys; also the id of its private chat with them. */
  ownerId: number;
  /** Bot API root without a trailing slash (TELEGRAM_API_ROOT, default Telegram's). */
  apiRoot: string;
}

const DEFAULT_API_ROOT = "https://api.telegram.org";
/** What BotFather hands out: the bot's numeric id, a colon, then a secret of URL-safe characters. */
const TOKEN_SHAPE = /^\d+:[A-Za-z0-9_-]{20,}$/;

/** The bot's settings before pairing: the owner is null while TELEGRAM_OWNER_ID is unset. */
export interface BotAccess extends Omit<TelegramConfig, "ownerId"> {
  ownerId: number | null;
}

/** Reads TELEGRAM_BOT_TOKEN, TELEGRAM_OWNER_ID and TELEGRAM_API_ROOT; throws TelegramConfigError with the fix. */
export function readTelegramConfig(env: Readonly<Record<string, string | undefined>>): TelegramConfig {
  const access = readBotAccess(env);
  if (access.ownerId === null) {
    throw new TelegramConfigError(
      "TELEGRAM_OWNER_ID is not set: the bot obeys only its owner. Run pencil telegram in a terminal to pair your Telegram account with a one-time code, or put your numeric user id in .env.",
      "TELEGRAM_OWNER_ID",
    );
  }
  return { ...access, ownerId: access.ownerId };
}

/** Like readTelegramConfig, but an unset TELEGRAM_OWNER_ID is null (pairing sets it) rather than an error. */
export function readBotAccess(env: Readonly<Record<string, string | undefined>>): BotAccess {
  const token = (env.TELEGRAM_BOT_TOKEN ?? "").trim();
  if (token === "") {
    throw new TelegramConfigError(
      "TELEGRAM_BOT_TOKEN is not set: create a bot with @BotFather (/newbot) and put the token it gives you in .env as TELEGRAM_BOT_TOKEN=…",
      "TELEGRAM_BOT_TOKEN",
    );
  }
  if (!TOKEN_SHAPE.test(token)) {
    throw new TelegramConfigError(
      "TELEGRAM_BOT_TOKEN does not look like a bot token (digits, a colon, then the secret, e.g. 123456789:AA…): copy it again from @BotFather.",
      "TELEGRAM_BOT_TOKEN",
    );
  }
  const rawOwner = (env.TELEGRAM_OWNER_ID ?? "").trim();
  if (rawOwner === "") return { token, ownerId: null, apiRoot: apiRootOf(env.TELEGRAM_API_ROOT) };
  if (!/^\d{1,16}$/.test(rawOwner) || Number(rawOwner) <= 0 || !Number.isSafeInteger(Number(rawOwner))) {
    throw new TelegramConfigError(
      `TELEGRAM_OWNER_ID must be your numeric Telegram user id (digits only, e.g. 123456789), not ${JSON.stringify(rawOwner.slice(0, 40))}.`,
      "TELEGRAM_OWNER_ID",
    );
  }
  return { token, ownerId: Number(rawOwner), apiRoot: apiRootOf(env.TELEGRAM_API_ROOT) };
}

function apiRootOf(raw: string | undefined): string {
  const value = (raw ?? "").trim();
  if (value === "") return DEFAULT_API_ROOT;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TelegramConfigError(
      `TELEGRAM_API_ROOT is not a URL: ${JSON.stringify(value)}. Leave it unset for Telegram's, or give e.g. http://127.0.0.1:8081.`,
      "TELEGRAM_API_ROOT",
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TelegramConfigError(
      `TELEGRAM_API_ROOT must be an http(s) URL, not ${url.protocol}.`,
      "TELEGRAM_API_ROOT",
    );
  }
  return value.replace(/\/+$/, "");
}
