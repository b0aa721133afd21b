import { hint } from "../io.ts";
import { recoverInterrupted } from "../../../app/interrupted-runs.ts";
import type { AgentRun } from "../../../app/agent-run.ts";
import type { Runtime } from "../../../app/runtime.ts";
import type { Changeset } from "../../../core/staging/changeset.ts";
import { visible } from "../../../render/visible-text.ts";
import { assertSameWorkspace } from "../../../app/apply-reviewed.ts";
import { exportPatch } from "../../../render/patch-export.ts";
import { formatSummary } from "../../../render/summary.ts";
import type { CommandContext } from "../command-context.ts";
import { openRuntime } from "../open-runtime.ts";
import { ProgressView } from "../progress.ts";
import { reviewLoop } from "../review-flow.ts";
import { terminalApprover } from "../terminal-approver.ts";
import { requireGitForCommit } from "../git-review.ts";
import { nobodyApprover } from "../../../core/policy/approver.ts";
import { webReview } from "../web-review.ts";

/** `pencil review [ID] [--patch]`: reviews a pending changeset (the workspace's latest when no ID). */
export async function run(ctx: CommandContext): Promise<number> {
  const runtime = openRuntime(ctx);
  const { io } = ctx;
  const id = ctx.args.positionals[0];
  // A run killed mid-way (kill -9, a crash) left its staged work in its session: it becomes reviewable here.
  for (const found of await recoverInterrupted(runtime, (sid, error) => io.err(`session ${sid}: ${error.message}\n`))) {
    io.err(
      io.colors.yellow(
        `A run was interrupted: ${found.session.goal.split("\n", 1)[0]!.slice(0, 80)}${found.changeset ? ` — its staged work is changeset ${found.changeset.id}` : " — it had staged nothing"}.\n`,
      ),
    );
  }
  const damaged: { file: string; error: Error }[] = [];
  const cs = id
    ? runtime.store.load(id)
    : await pickPending(ctx, runtime, (file, error) => damaged.push({ file, error }));
  // A changeset file that cannot be read may be the one the owner is looking for: never pass over it in silence.
  for (const d of damaged) io.err(`${io.colors.red("damaged changeset")} ${d.file}: ${d.error.message}\n`);
  if (!cs && damaged.length > 0) {
    io.err(
      `No readable pending changeset for ${runtime.ws.root}, and ${damaged.length} changeset file(s) could not be read (above); one of them may be the changeset you want. ` +
        `Move each aside (mv FILE FILE.damaged) and re-run the agent.\n`,
    );
    return 1;
  }
  if (!cs) {
    io.out(`No pending changeset for ${runtime.ws.root}. See all with: ${hint(io, "log")}\n`);
    return 0;
  }
  if (damaged.length > 0) io.err(`Reviewing ${cs.id}, the newest pending changeset that could be read.\n`);
  assertSameWorkspace(runtime, cs);
  if (ctx.args.commit && !ctx.args.patch) requireGitForCommit(runtime);
  if (ctx.args.patch) {
    const { patch, skipped } = exportPatch(cs);
    io.out(patch);
    for (const s of skipped) io.err(`not in the patch: ${s.path} (${s.reason})\n`);
    return 0;
  }
  if (cs.status !== "pending") {
    io.out(`Changeset ${cs.id} is ${cs.status}, not pending; there is nothing to review. Print it with --patch.\n`);
    return 0;
  }
  if (ctx.args.web) {
    // The page is the review: no terminal is needed to decide, and reasons still reach the reopened run.
    const { agentRun, logPath } = await reopenRun(runtime, cs);
    const view = new ProgressView(io, { logPath });
    const approver = io.interactive ? terminalApprover(io, () => view.pause()) : nobodyApprover;
    const ci = runtime.env.CI !== undefined && runtime.env.CI !== "" && runtime.env.CI !== "0";
    return webReview(io, runtime, cs, agentRun, { approver, emit: view.sink }, { openBrowser: !ci && io.interactive });
  }
  if (!io.interactive) {
    io.out(formatSummary(cs, { color: io.color }));
    io.out(
      `\nNo terminal to review on, so nothing was applied. Run ${hint(io, `review ${cs.id}`)} in a terminal, or print it with --patch.\n`,
    );
    return 3;
  }
  // Reopened as a run, so a rejection with a reason can still go back to the agent.
  const { agentRun, logPath } = await reopenRun(runtime, cs);
  const view = new ProgressView(io, { logPath });
  const hooks = { approver: terminalApprover(io, () => view.pause()), emit: view.sink };
  return reviewLoop(io, runtime, cs, agentRun, hooks, {}, { commit: ctx.args.commit, open: ctx.args.open });
}

/**
 * The changeset reopened as a run, so a rejection with a reason can go back to the agent, and the run's log file. Loaded
 * here, not at the top: the agent's stack (the AI SDK, its providers, the tools) is half of this command's start, and
 * `--patch` and a review without a terminal need none of it.
 */
async function reopenRun(runtime: Runtime, cs: Changeset): Promise<{ agentRun: AgentRun; logPath: string }> {
  const [{ AgentRun }, { runLogPath }] = await Promise.all([
    import("../../../app/agent-run.ts"),
    import("../run-and-review.ts"),
  ]);
  return { agentRun: AgentRun.resume(runtime, cs), logPath: runLogPath(runtime) };
}

/**
 * The pending changeset to review when no ID is given: the only one, or — with
 * several — a numbered list, newest first, to pick from (the newest without a terminal).
 */
async function pickPending(
  ctx: CommandContext,
  runtime: Runtime,
  onBad: (file: string, error: Error) => void,
): Promise<Changeset | undefined> {
  const { io } = ctx;
  const pending = runtime.store
    .list(onBad)
    .filter((cs) => cs.status === "pending" && cs.workspace === runtime.ws.root)
    // Ids sort by the second; creation times by the millisecond.
    .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  if (pending.length <= 1) return pending[0];
  io.out(`${pending.length} changesets are pending, newest first:\n`);
  pending.forEach((cs, i) =>
    io.out(
      `  ${i + 1}. ${cs.id}  ${cs.createdAt.replace("T", " ").slice(0, 16)}  ${visible(cs.goal.split("\n", 1)[0]!.slice(0, 70))} (${cs.files.length} file${cs.files.length === 1 ? "" : "s"})\n`,
    ),
  );
  if (!io.interactive) return pending[0];
  for (;;) {
    const line = await io.prompt(`Which one? [1–${pending.length}, Enter for 1] `);
    if (line === null) return undefined;
    const n = line.trim() === "" ? 1 : Number(line.trim());
    if (Number.isInteger(n) && n >= 1 && n <= pending.length) return pending[n - 1];
    io.out(`Type a number from 1 to ${pending.length}.\n`);
  }
}
