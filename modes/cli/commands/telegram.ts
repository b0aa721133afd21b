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
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await bot.stop();
  return 0;
}
