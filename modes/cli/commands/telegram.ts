import type { CommandContext } from "../main.ts";

/** `pencil telegram`: starts the bot and runs until Ctrl-C. */
export async function run(ctx: CommandContext): Promise<number> {
  const { startTelegramBot } = await import("../../telegram/start-bot.ts");
  const bot = await startTelegramBot({
    env: ctx.env,
    ...(ctx.args.workspace ? { workspace: ctx.args.workspace } : {}),
    allow: ctx.args.allow,
    deny: ctx.args.deny,
    ...(ctx.args.model ? { model: ctx.args.model } : {}),
    log: (line: string) => ctx.io.err(`${line}\n`),
  });
  ctx.io.out("Pencil's Telegram bot is running. Ctrl-C stops it.\n");
  const signalled = new Promise<null>((resolve) => {
    process.once("SIGINT", () => resolve(null));
    process.once("SIGTERM", () => resolve(null));
  });
  // A bot that no longer polls must not stay alive looking healthy: exit 1, so a supervisor restarts it.
  const died = await Promise.race([signalled, bot.done]);
  if (died) {
    ctx.io.err(`${died.message} Exiting; start it again (a supervisor such as systemd can do that).\n`);
    return 1;
  }
  await bot.stop();
  return 0;
}
