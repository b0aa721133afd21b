import { UsageError } from "../args.ts";
import type { CommandContext } from "../main.ts";
import { renderMarkdown } from "../markdown.ts";
import { openRuntime } from "../open-runtime.ts";
import { ProgressView } from "../progress.ts";
import { runLogPath, runWithProgress } from "../run-and-review.ts";
import { reviewLoop } from "../review-flow.ts";

/** `pencil ask "<question>"`: answers from the code with read-only tools; saving the answer is a staged write. */
export async function run(ctx: CommandContext): Promise<number> {
  const question = ctx.args.positionals.join(" ").trim();
  if (!question) throw new UsageError('ask needs a question, e.g. pencil ask "where is the config loaded?"');
  const { io } = ctx;
  const runtime = openRuntime(ctx);
  const view = new ProgressView(io, { streamText: false, logPath: runLogPath(runtime) });
  const { run, hooks } = await runWithProgress(io, runtime, "ask", question, {}, view);
  const outcome = run.outcome!;
  if (outcome.stopped === "error") {
    if (ctx.args.json) io.out(`${JSON.stringify({ question, error: `The question could not be answered: ${outcome.error}` })}\n`);
    else io.err(io.colors.red(`The question could not be answered: ${outcome.error}\n`));
    return 1;
  }
  const answer = outcome.text.trim();
  if (ctx.args.json) {
    io.out(`${JSON.stringify({ question, answer, models: outcome.models })}\n`);
    return 0;
  }
  io.out(`\n${renderMarkdown(io, answer || "_(no answer)_")}\n`);
  if (!io.interactive || !answer) return 0;
  // Saving is the exception: a key in the footer, and anything but s (Enter first of all) is no.
  const key = await io.key(io.colors.dim("[s] save this answer to a file · [Enter] done "), "s\n");
  if (key !== "s") return 0;
  const path = (await io.prompt("Save to (a path in the workspace; Enter to cancel): "))?.trim();
  if (!path) return 0;
  try {
    const cs = run.stageUserFile(path, `${answer}\n`);
    return await reviewLoop(io, runtime, cs, null, hooks);
  } catch (error) {
    io.err(`${(error as Error).message}\n`);
    return 1;
  }
}
