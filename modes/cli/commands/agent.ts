import { UsageFailure } from "../../../core/errors/usage-failure.ts";
import type { CommandContext } from "../command-context.ts";
import { openRuntime } from "../open-runtime.ts";
import { continueSession } from "../continue-session.ts";
import { runAndReview } from "../run-and-review.ts";
import { requireGitForCommit } from "../git-review.ts";

/** `pencil agent "<goal>"`: run, then review the staged changeset. */
export async function run(ctx: CommandContext): Promise<number> {
  const goal = ctx.args.positionals.join(" ").trim();
  if (!goal) throw new UsageFailure('agent needs a goal, e.g. pencil agent "add a --verbose flag to the CLI"');
  const runtime = openRuntime(ctx);
  if (ctx.args.commit) requireGitForCommit(runtime);
  return runAndReview(ctx.io, runtime, goal, {}, { commit: ctx.args.commit }, continueSession(ctx, runtime));
}
