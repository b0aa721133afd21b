import type { AgentRun } from "../../../app/agent-run.ts";
import type { Runtime } from "../../../app/runtime.ts";
import { UsageFailure } from "../../../core/errors/usage-failure.ts";
import { continueSession } from "../continue-session.ts";
import type { CommandContext } from "../command-context.ts";
import { renderMarkdown } from "../markdown.ts";
import { openRuntime } from "../open-runtime.ts";
import { ProgressView } from "../progress.ts";
import { FOLLOW_UP_PROMPT, runLogPath, runWithProgress } from "../run-and-review.ts";
import { reviewLoop } from "../review-flow.ts";

/** `pencil ask "<question>"`: answers from the code with read-only tools; saving the answer is a staged write. */
export async function run(ctx: CommandContext): Promise<number> {
  const question = ctx.args.positionals.join(" ").trim();
  if (!question) throw new UsageFailure('ask needs a question, e.g. pencil ask "where is the config loaded?"');
  const { io } = ctx;
  const runtime = openRuntime(ctx);
  let existing = continueSession(ctx, runtime, {}, "ask");
  let text = question;
  // The first question, then each follow-up at › in the same session.
  for (;;) {
    const turn = await answerOnce(ctx, runtime, text, existing);
    existing = turn.run;
    if (ctx.args.json || !io.interactive || turn.code === 3) return turn.code;
    io.out(io.colors.dim("\nFollow up in this session (empty line or Ctrl-D to end):\n"));
    const next = (await io.prompt(FOLLOW_UP_PROMPT))?.trim();
    if (!next) return turn.code;
    text = next;
  }
}

/** One question and its answer (optionally saved as a staged file and reviewed); returns the run for the next turn. */
async function answerOnce(
  ctx: CommandContext,
  runtime: Runtime,
  question: string,
  existing: AgentRun | null,
): Promise<{ code: number; run: AgentRun }> {
  const { io } = ctx;
  const view = new ProgressView(io, { streamText: false, logPath: runLogPath(runtime) });
  const { run, hooks } = await runWithProgress(io, runtime, "ask", question, {}, view, existing);
  const outcome = run.outcome!;
  if (outcome.stopped === "error") {
    if (ctx.args.json)
      io.out(`${JSON.stringify({ question, error: `The question could not be answered: ${outcome.error}` })}\n`);
    else io.err(io.colors.red(`The question could not be answered: ${outcome.error}\n`));
    return { code: 1, run };
  }
  const answer = outcome.text.trim();
  if (ctx.args.json) {
    io.out(`${JSON.stringify({ question, answer, models: outcome.models, session: run.session?.id ?? null })}\n`);
    return { code: 0, run };
  }
  io.out(`\n${renderMarkdown(io, answer || "_(no answer)_")}\n`);
  if (!io.interactive || !answer) return { code: 0, run };
  // Saving is the exception: a key in the footer, and anything but s (Enter first of all) is no.
  const key = await io.key(io.colors.dim("[s] save this answer to a file · [Enter] done "), "s\n");
  if (key !== "s") return { code: 0, run };
  const path = (await io.prompt("Save to (a path in the workspace; Enter to cancel): "))?.trim();
  if (!path) return { code: 0, run };
  try {
    const cs = run.stageUserFile(path, `${answer}\n`);
    return { code: await reviewLoop(io, runtime, cs, null, hooks), run };
  } catch (error) {
    io.err(`${(error as Error).message}\n`);
    return { code: 1, run };
  }
}
