import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { pencilHomeOf } from "../../../core/pencil-home.ts";
import { type StopSignal, stopNow } from "../../../app/stop-on-signal.ts";
import { UsageFailure } from "../../../core/errors/usage-failure.ts";
import { hint } from "../io.ts";
import type { CommandContext } from "../command-context.ts";

/**
 * `pencil telegram`: starts the bot and runs until Ctrl-C. With a token and no
 * TELEGRAM_OWNER_ID it pairs first (a six-digit code printed here, sent back as
 * `/start <code>` from the account that will own the bot); `--pair` pairs again,
 * replacing the owner once the terminal has confirmed it.
 */
export async function run(ctx: CommandContext): Promise<number> {
  const { io } = ctx;
  const owner = ctx.env.TELEGRAM_OWNER_ID?.trim();
  if (ctx.args.pair && owner) {
    if (!io.interactive)
      throw new UsageFailure(
        `pencil telegram --pair replaces the owner (user ${owner}) and asks first: run it in a terminal.`,
      );
    const answer = await io.key(
      `Replace the bot's owner (user ${owner}) with whoever sends the new code? [y/N] `,
      "yn",
    );
    if (answer !== "y" && answer !== "yes") {
      io.out("The owner stays as it is.\n");
      return 0;
    }
  }
  const { startTelegramBot } = await import("../../telegram/start-bot.ts");
  const { describeOwner, PAIRING_LIMITS } = await import("../../telegram/pairing.ts");
  const minutes = Math.round(PAIRING_LIMITS.timeoutMs / 60_000);
  // Read before pairing writes $PENCIL_HOME/.env.
  const elsewhere = ctx.args.pair ? ownerSetElsewhere(ctx, owner) : null;
  const bot = await startTelegramBot({
    env: ctx.env,
    ...(ctx.args.workspace ? { workspace: ctx.args.workspace } : {}),
    allow: ctx.args.allow,
    deny: ctx.args.deny,
    ...(ctx.args.model ? { model: ctx.args.model } : {}),
    log: (line: string) => io.err(`${line}\n`),
    pairing: {
      replace: ctx.args.pair,
      onCode: (code, username) =>
        io.out(
          `Pairing. From the Telegram account that should own this bot, send @${username} this message within ${minutes} minutes:\n\n` +
            `    /start ${code}\n\n` +
            `Nobody else is answered; after ${PAIRING_LIMITS.wrongCodes} wrong codes pairing ends. Waiting…\n`,
        ),
      onPaired: (paired, file) => {
        io.out(`Paired with ${describeOwner(paired)}. TELEGRAM_OWNER_ID=${paired.id} is saved in ${file}.\n`);
        if (elsewhere)
          io.err(
            `TELEGRAM_OWNER_ID=${owner} is also set in ${elsewhere}, which is read before ${file}: remove it there, or the old owner is back at the next start.\n`,
          );
      },
    },
  });
  io.out(`Pencil's Telegram bot is running. Ctrl-C stops it. (${hint(io, "doctor")} checks the bot's settings.)\n`);
  const stop = stopSignals();
  // A bot that no longer polls must not stay alive looking healthy: exit 1, so a supervisor restarts it.
  const died = await Promise.race([stop.signalled, bot.done]);
  if (died instanceof Error) {
    stop.remove();
    io.err(`${died.message} Exiting; start it again (a supervisor such as systemd can do that).\n`);
    return 1;
  }
  if (died === null) {
    stop.remove();
    return 0;
  }
  // Asked to stop: the runs are cancelled (their commands and their namespaces ended, their scratch removed, their
  // sessions saved) and polling ends; exit 0, a clean stop for a supervisor. A second signal, or a stop that takes
  // longer than STOP_GRACE_MS, stops at once as the terminal's Pencil does (commands ended, sessions saved, 128 + N).
  const force = () => stopNow(died, io.err);
  stop.remove();
  for (const signal of STOP_SIGNALS) process.on(signal, force);
  const grace = setTimeout(force, STOP_GRACE_MS);
  try {
    await bot.stop();
  } finally {
    clearTimeout(grace);
    for (const signal of STOP_SIGNALS) process.off(signal, force);
  }
  return 0;
}

/** The signals that stop the bot: Ctrl-C, what `timeout`, systemd and a CI cancel send, a closed terminal. */
const STOP_SIGNALS: readonly StopSignal[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/** Longest a requested stop may take (a run's model call or command ending) before everything is ended at once. */
const STOP_GRACE_MS = 10_000;

/** Waits for the first of STOP_SIGNALS (resolves to it); `remove` takes the handlers away again. */
function stopSignals(): { signalled: Promise<StopSignal>; remove: () => void } {
  let resolve: (signal: StopSignal) => void = () => {};
  const signalled = new Promise<StopSignal>((r) => {
    resolve = r;
  });
  const handlers = STOP_SIGNALS.map((signal) => [signal, () => resolve(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  return {
    signalled,
    remove: () => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
    },
  };
}

/** Where the owner being replaced came from, when that is not `$PENCIL_HOME/.env` (which pairing writes). */
function ownerSetElsewhere(ctx: CommandContext, owner: string | undefined): string | null {
  if (!owner) return null;
  try {
    const own = parseEnv(readFileSync(join(pencilHomeOf(ctx.env), ".env"), "utf8")) as Record<string, string>;
    if (own.TELEGRAM_OWNER_ID?.trim() === owner) return null;
  } catch {
    // No readable $PENCIL_HOME/.env: the old owner came from elsewhere.
  }
  return ctx.config?.bun.join(" or ") || "the environment";
}
