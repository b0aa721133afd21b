import { modelSpecs } from "../../../ai/model-specs.ts";
import { hint, type CliIO } from "../io.ts";
import type { CommandContext } from "../command-context.ts";
import { openRuntime } from "../open-runtime.ts";
import { continueSession } from "../continue-session.ts";
import { runAndReview } from "../run-and-review.ts";

/** The figlet banner and the one line under it (figlet is loaded here only). */
async function banner(io: CliIO): Promise<void> {
  const figlet = (await import("figlet")).default;
  // The font as a module, not a file figlet looks up beside itself: the single executable carries it that way.
  figlet.parseFont("Standard", (await import("figlet/importable-fonts/Standard.js")).default);
  io.out(`${io.colors.cyan(figlet.textSync("Pencil", { font: "Standard" }))}\n`);
  io.out(
    io.colors.dim("A coding agent that writes in pencil: nothing reaches your disk until you approve the diff.\n\n"),
  );
}

/**
 * Bare `pencil` in a terminal: the banner, then the goal prompt, the run, its review and
 * follow-ups, as other coding agents open a session. With no model configured it says so
 * first, before asking for a goal that could not run, and offers the demo instead.
 */
export async function session(ctx: CommandContext): Promise<number> {
  const { io } = ctx;
  await banner(io);
  try {
    modelSpecs(ctx.env, ctx.args.model);
  } catch (error) {
    const message = (error as Error).message;
    const lead = /^No model is configured/.test(message) ? "" : `${io.colors.yellow("No model is configured yet.")} `;
    io.out(`${lead}${message.replace(/^No model is configured\./, io.colors.yellow("No model is configured yet."))}\n`);
    io.out(`${hint(io, "doctor")} says what is set and what is missing.\n\n`);
    for (;;) {
      const choice = (await io.key("[d] run the demo (offline, no keys)  [x] exit: ", "dx"))?.trim().toLowerCase();
      if (choice === undefined || choice === "x" || choice === "exit" || choice === "") return 0;
      if (choice === "d" || choice === "demo") return (await import("./demo.ts")).run(ctx);
      io.out("Type d or x.\n");
    }
  }
  const goal = (await io.prompt("What should Pencil do? "))?.trim();
  if (!goal) return 0;
  const runtime = openRuntime(ctx);
  return runAndReview(io, runtime, goal, {}, {}, continueSession(ctx, runtime));
}

/** `pencil wakeup`: the banner, then CLI or Telegram (or exit). */
export async function run(ctx: CommandContext): Promise<number> {
  const { io } = ctx;
  await banner(io);
  if (!io.interactive) {
    io.out(`No terminal to ask on. Run ${hint(io, 'agent "<goal>"')} or ${hint(io, "telegram")} directly.\n`);
    return 0;
  }
  for (;;) {
    const choice = (await io.key("[c] CLI  [t] Telegram  [x] exit: ", "ctx"))?.trim().toLowerCase();
    if (choice === undefined || choice === "x" || choice === "exit") return 0;
    if (choice === "c" || choice === "cli") {
      const goal = (await io.prompt("What should Pencil do? "))?.trim();
      if (!goal) return 0;
      const runtime = openRuntime(ctx);
      return runAndReview(io, runtime, goal, {}, {}, continueSession(ctx, runtime));
    }
    if (choice === "t" || choice === "telegram") {
      if (!ctx.env.TELEGRAM_BOT_TOKEN) {
        io.out(
          `Telegram needs TELEGRAM_BOT_TOKEN (from @BotFather: /newbot) in ~/.pencil/.env; see docs/telegram.md. Then run ${hint(io, "telegram")}, which pairs your account with a one-time code.\n`,
        );
        return 2;
      }
      return (await import("./telegram.ts")).run(ctx);
    }
    io.out("Type c, t or x.\n");
  }
}
