import { hint } from "../io.ts";
import { planToGoal } from "../../../core/plan-schema.ts";
import { formatPlanMarkdown } from "../../../render/plan-markdown.ts";
import { UsageFailure } from "../../../core/errors/usage-failure.ts";
import type { CommandContext } from "../command-context.ts";
import { renderMarkdown } from "../markdown.ts";
import { openRuntime } from "../open-runtime.ts";
import { ProgressView } from "../progress.ts";
import { continueSession } from "../continue-session.ts";
import { runAndReview, runLogPath, runWithProgress } from "../run-and-review.ts";

/** `pencil plan "<goal>"`: a structured plan from read-only tools; pick steps; optionally run them as an agent run. */
export async function run(ctx: CommandContext): Promise<number> {
  const goal = ctx.args.positionals.join(" ").trim();
  if (!goal)
    throw new UsageFailure('plan needs a goal, e.g. pencil plan "split the config loader into its own module"');
  const { io } = ctx;
  const runtime = openRuntime(ctx);
  const existing = continueSession(ctx, runtime, {}, "plan");
  const { run } = await runWithProgress(
    io,
    runtime,
    "plan",
    goal,
    {},
    new ProgressView(io, { streamText: false, logPath: runLogPath(runtime) }),
    existing,
  );
  const outcome = run.outcome!;
  if (outcome.stopped === "error") {
    if (ctx.args.json) io.out(`${JSON.stringify({ error: `Planning failed: ${outcome.error}` })}\n`);
    else io.err(io.colors.red(`Planning failed: ${outcome.error}\n`));
    return 1;
  }
  const chosenPlan = run.plan;
  if (!chosenPlan) {
    if (ctx.args.json) {
      io.out(`${JSON.stringify({ error: "The model finished without submitting a plan.", text: outcome.text })}\n`);
      return 1;
    }
    io.err("The model finished without submitting a plan. Its last words:\n");
    io.out(`${renderMarkdown(io, outcome.text || "_(nothing)_")}\n`);
    return 1;
  }
  if (ctx.args.json) {
    io.out(`${JSON.stringify(chosenPlan, null, 2)}\n`);
    return 0;
  }
  io.out(`\n${renderMarkdown(io, formatPlanMarkdown(chosenPlan))}\n`);
  if (!io.interactive) {
    io.out(`No terminal, so no steps are run. Run ${hint(io, "plan")} in a terminal to pick steps and proceed.\n`);
    return 0;
  }
  const steps = chosenPlan.steps;
  const picked = await pickSteps(
    ctx,
    steps.map((s) => s.id),
  );
  if (picked === null || picked.length === 0) {
    io.out("No steps chosen; nothing was run.\n");
    return 0;
  }
  const proceed = (await io.prompt(`Run ${picked.length} step(s) (${picked.join(", ")}) as an agent run? [Y/n] `))
    ?.trim()
    .toLowerCase();
  if (proceed === undefined || proceed === "n" || proceed === "no") {
    io.out("Not run.\n");
    return 0;
  }
  return runAndReview(io, runtime, planToGoal(chosenPlan, picked));
}

/** Asks which steps to run: Enter for all, numbers or ids separated by commas, or `none`. Null when input ended. */
async function pickSteps(ctx: CommandContext, ids: string[]): Promise<string[] | null> {
  for (;;) {
    const line = await ctx.io.prompt(
      `Steps to run — Enter for all (${ids.length}), e.g. 1,3 or ${ids[0] ?? "s1"}, or none: `,
    );
    if (line === null) return null;
    const text = line.trim();
    if (text === "") return ids;
    if (text === "none") return [];
    const picked: string[] = [];
    let bad = "";
    for (const token of text.split(/[\s,]+/).filter(Boolean)) {
      const n = Number(token);
      const id = Number.isInteger(n) && n >= 1 && n <= ids.length ? ids[n - 1] : ids.find((i) => i === token);
      if (id === undefined) bad = token;
      else if (!picked.includes(id)) picked.push(id);
    }
    if (!bad) return picked;
    ctx.io.out(`"${bad}" is not a step; use numbers 1–${ids.length} or ids (${ids.join(", ")}).\n`);
  }
}
