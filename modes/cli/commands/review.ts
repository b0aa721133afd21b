import { hint } from "../io.ts";
import { AgentRun } from "../../../app/agent-run.ts";
import { assertSameWorkspace } from "../../../app/apply-reviewed.ts";
import { exportPatch } from "../../../render/patch-export.ts";
import { formatSummary } from "../../../render/summary.ts";
import type { CommandContext } from "../main.ts";
import { openRuntime } from "../open-runtime.ts";
import { ProgressView } from "../progress.ts";
import { reviewLoop } from "../review-flow.ts";
import { runLogPath } from "../run-and-review.ts";
import { terminalApprover } from "../terminal-approver.ts";

/** `pencil review [ID] [--patch]`: reviews a pending changeset (the workspace's latest when no ID). */
export async function run(ctx: CommandContext): Promise<number> {
  const runtime = openRuntime(ctx);
  const { io } = ctx;
  const id = ctx.args.positionals[0];
  const cs = id ? runtime.store.load(id) : runtime.store.latestPending(runtime.ws.root);
  if (!cs) {
    io.out(`No pending changeset for ${runtime.ws.root}. See all with: ${hint(io, "log")}\n`);
    return 0;
  }
  assertSameWorkspace(runtime, cs);
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
  if (!io.interactive) {
    io.out(formatSummary(cs, { color: io.color }));
    io.out(`\nNo terminal to review on, so nothing was applied. Run ${hint(io, `review ${cs.id}`)} in a terminal, or print it with --patch.\n`);
    return 3;
  }
  // Reopened as a run, so a rejection with a reason can still go back to the agent.
  const agentRun = AgentRun.resume(runtime, cs);
  const view = new ProgressView(io, { logPath: runLogPath(runtime) });
  const hooks = { approver: terminalApprover(io, () => view.pause()), emit: view.sink };
  return reviewLoop(io, runtime, cs, agentRun, hooks);
}
