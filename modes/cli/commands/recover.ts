import { recoverInWorkspace } from "../../../app/recover-apply.ts";
import { findInterruptedApplies } from "../../../core/apply/recovery.ts";
import { UsageFailure } from "../../../core/errors/usage-failure.ts";
import type { CommandContext } from "../command-context.ts";
import { openRuntime } from "../open-runtime.ts";

/** What recover does to one interrupted apply (shell completion offers them too). */
export const ACTIONS = ["finish", "rollback"] as const;

/** `pencil recover [finish|rollback ID]`: lists interrupted applies and undos, or settles one. */
export async function run(ctx: CommandContext): Promise<number> {
  const runtime = openRuntime(ctx);
  const { io } = ctx;
  const [action, id] = ctx.args.positionals;
  if (!action) {
    const pending = findInterruptedApplies(runtime.journalDir);
    if (pending.length === 0) io.out("No interrupted apply or undo.\n");
    for (const p of pending) {
      io.out(`${p.applyId} (${p.changesetId}): ${p.message}\n`);
      for (const leftover of p.leftovers)
        io.out(`  temporary file left by the interrupted write: ${leftover} (finish or rollback removes it)\n`);
    }
    return 0;
  }
  if (!(ACTIONS as readonly string[]).includes(action) || !id) {
    throw new UsageFailure(
      "Use: pencil recover finish ID   or   pencil recover rollback ID (pencil recover lists the IDs).",
    );
  }
  const result = recoverInWorkspace(runtime, action as (typeof ACTIONS)[number], id);
  for (const p of result.written) io.out(`wrote    ${p}\n`);
  for (const p of result.alreadyDone) io.out(`ok       ${p}\n`);
  for (const r of result.refused) io.out(`refused  ${r.path}: ${r.reason}\n`);
  for (const p of result.removedLeftovers) io.out(`removed  ${p}\n`);
  io.out(`${result.operation === "undo" ? "Undo of apply" : "Apply"} ${result.applyId}: ${result.state}.\n`);
  return result.refused.length > 0 ? 4 : 0;
}
