import { randomInt, timingSafeEqual } from "node:crypto";
import { Bot } from "grammy";
import type { Update } from "grammy/types";
import { hardenApi } from "./build-bot.ts";
import { type ApiTimeouts, callDeadlines, longestCall } from "./api-timeouts.ts";
import { TelegramConfigError } from "../../core/errors/telegram-config-error.ts";
import { escapeHtml } from "./html.ts";
import { errorText } from "./scrub.ts";

/** Who paired: the Telegram account that sent `/start <code>`, now the owner. */
export interface PairedOwner {
  id: number;
  firstName: string;
  lastName?: string;
  username?: string;
}

/** How long a pairing code stays good, and how many wrong codes end pairing. */
export const PAIRING_LIMITS = { timeoutMs: 10 * 60 * 1000, wrongCodes: 5 } as const;

/** A six-digit code from the system's cryptographic random source (leading zeros kept). */
export function newPairingCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, "0");
}

/** What one update did to a pairing: nothing (not a `/start <code>` in a private chat), a wrong code, or the pairing. */
export type PairingStep =
  | { kind: "ignored"; senderId: number | null }
  | { kind: "wrong"; senderId: number; left: number }
  | { kind: "ended"; senderId: number }
  | { kind: "paired"; owner: PairedOwner };

/**
 * One pairing: a code that is good once, for the first private `/start <code>`. A
 * wrong code counts toward the limit, and at the limit the pairing is over (no code
 * works any more). The comparison takes the same time whatever the guess, so the
 * code cannot be found digit by digit from how fast the bot reacts.
 */
export class Pairing {
  private wrong = 0;
  private over = false;
  private readonly expected: Buffer;

  constructor(
    readonly code: string,
    private readonly limit: number = PAIRING_LIMITS.wrongCodes,
  ) {
    this.expected = Buffer.from(code);
  }

  /** True once the code paired someone or too many wrong codes came in. */
  get done(): boolean {
    return this.over;
  }

  /** Judges one update. Only a message in a private chat whose sender is that chat counts. */
  step(update: Update): PairingStep {
    const message = update.message;
    const from = message?.from;
    const senderId = from?.id ?? null;
    if (this.over || !message || !from || from.is_bot || message.chat.type !== "private" || message.chat.id !== from.id)
      return { kind: "ignored", senderId };
    if (message.forward_origin !== undefined) return { kind: "ignored", senderId };
    const start = /^\/start(?:@[A-Za-z0-9_]+)?(?:\s+(\S+))?\s*$/.exec(message.text ?? "");
    if (!start) return { kind: "ignored", senderId };
    if (this.matches(start[1] ?? "")) {
      this.over = true;
      return {
        kind: "paired",
        owner: {
          id: from.id,
          firstName: from.first_name,
          ...(from.last_name ? { lastName: from.last_name } : {}),
          ...(from.username ? { username: from.username } : {}),
        },
      };
    }
    this.wrong += 1;
    if (this.wrong >= this.limit) {
      this.over = true;
      return { kind: "ended", senderId: from.id };
    }
    return { kind: "wrong", senderId: from.id, left: this.limit - this.wrong };
  }

  private matches(guess: string): boolean {
    const given = Buffer.from(guess);
    // timingSafeEqual needs equal lengths; compare against itself so a short guess costs the same.
    const same = given.length === this.expected.length;
    return timingSafeEqual(same ? given : this.expected, this.expected) && same;
  }
}

/** How to run a pairing against the Bot API. */
export interface PairOptions {
  token: string;
  apiRoot: string;
  timeouts: ApiTimeouts;
  log: (line: string) => void;
  /** Called once with the code and the bot's @username, before the first poll: the terminal prints it. */
  onCode: (code: string, botUsername: string) => void;
  /** Default PAIRING_LIMITS.timeoutMs. */
  timeoutMs?: number;
  /** The code to use (tests); default a fresh random one. */
  code?: string;
}

/** A name to print for an owner: `Ada Lovelace (@ada, id 42)`. */
export function describeOwner(owner: PairedOwner): string {
  const name = [owner.firstName, owner.lastName].filter(Boolean).join(" ");
  return `${name} (${owner.username ? `@${owner.username}, ` : ""}id ${owner.id})`;
}

/**
 * Polls the bot's updates until someone sends `/start <code>` in a private chat, and
 * returns that account. Nothing else is answered: a stranger, a wrong code, a group
 * learn nothing, not even that the bot is pairing. Throws TelegramConfigError (exit 2)
 * when pairing ends without an owner: five wrong codes, or the time is up. The
 * updates it read are confirmed before it returns, so the bot that starts next does
 * not see them again.
 */
export async function pairOwner(options: PairOptions): Promise<PairedOwner> {
  const bot = new Bot(options.token, {
    client: { apiRoot: options.apiRoot, timeoutSeconds: longestCall(options.timeouts) },
  });
  bot.api.config.use(callDeadlines(options.timeouts));
  hardenApi(bot, options.log, options.timeouts);
  const me = await bot.api.getMe();
  bot.botInfo = me;
  const pairing = new Pairing(options.code ?? newPairingCode());
  let settle: (result: PairedOwner | Error) => void = () => {};
  const outcome = new Promise<PairedOwner | Error>((resolve) => {
    settle = resolve;
  });
  bot.use(async (ctx) => {
    const step = pairing.step(ctx.update);
    if (step.kind === "ignored") {
      options.log(`pairing: ignored update ${ctx.update.update_id} from sender ${step.senderId ?? "unknown"}`);
    } else if (step.kind === "wrong") {
      options.log(`pairing: a wrong code from sender ${step.senderId} (${step.left} tries left)`);
    } else if (step.kind === "ended") {
      options.log(`pairing: a wrong code from sender ${step.senderId}; that was the last try`);
      settle(
        new TelegramConfigError(
          `Pairing ended after ${PAIRING_LIMITS.wrongCodes} wrong codes; no owner was set. Run pencil telegram again for a new code.`,
          "TELEGRAM_OWNER_ID",
        ),
      );
    } else {
      settle(step.owner);
    }
  });
  bot.catch((error) => options.log(`pairing: ${errorText(error.error, options.token)}`));
  const timeoutMs = options.timeoutMs ?? PAIRING_LIMITS.timeoutMs;
  const timer = setTimeout(
    () =>
      settle(
        new TelegramConfigError(
          `Nobody paired within ${Math.round(timeoutMs / 60_000) || 1} minutes; no owner was set. Run pencil telegram again for a new code.`,
          "TELEGRAM_OWNER_ID",
        ),
      ),
    timeoutMs,
  );
  const polling = bot.start({
    timeout: options.timeouts.pollSeconds,
    allowed_updates: ["message", "callback_query"],
    onStart: () => options.onCode(pairing.code, me.username),
  });
  polling.catch((error) =>
    settle(new Error(`The bot stopped polling while pairing: ${errorText(error, options.token)}`)),
  );
  const result = await outcome;
  clearTimeout(timer);
  // stop() confirms what was read, so the /start that paired is not handed to the bot that starts next.
  await bot.stop().catch((error) => options.log(`pairing: stopping: ${errorText(error, options.token)}`));
  await polling.catch(() => {});
  if (result instanceof Error) throw result;
  await bot.api
    .sendMessage(
      result.id,
      `✅ Paired: you are this bot's owner now, ${escapeHtml(result.firstName)}. Send /help for the commands, or /agent with a goal.`,
      { parse_mode: "HTML" },
    )
    .catch((error) => options.log(`pairing: could not greet the new owner: ${errorText(error, options.token)}`));
  return result;
}
