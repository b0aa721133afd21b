import { undoInWorkspace } from "../../../app/undo-changeset.ts";
import { findEntry } from "../../../core/apply/journal.ts";
import { hint } from "../io.ts";
import type { CommandContext } from "../command-context.ts";
import { openRuntime } from "../open-runtime.ts";

/** `pencil undo [ID]`: reverts an applied changeset (the latest when no ID), refusing files changed since. Exit 4 when some were refused. */
export async function run(ctx: CommandContext): Promise<number> {
  const runtime = openRuntime(ctx);
  const { io } = ctx;
  const c = io.colors;
  const ref = ctx.args.positionals[0];
  // Nothing applied here is not a failure: say so, exit 0.
  if (
    ref === undefined &&
    !findEntry(
      runtime.journalDir,
      (e) =>
        e.workspace === runtime.ws.root &&
        (e.state === "applied" || e.state === "partially-undone" || e.state === "undoing"),
    )
  ) {
    io.out(
      `Nothing to undo: no changeset applied in ${runtime.ws.root} is left to revert. See them all with: ${hint(io, "log")}\n`,
    );
    return 0;
  }
  const result = undoInWorkspace(runtime, ref);
  for (const path of result.reverted) io.out(`${c.green("reverted")} ${path}\n`);
  for (const refused of result.refused) io.out(`${c.red("kept")}     ${refused.path}: ${refused.reason}\n`);
  io.out(`Undo of ${result.changesetId} (apply ${result.applyId}): ${result.state}.\n`);
  // Undo does not rewrite history: the files are reverted in the working tree, the commit stays.
  for (const sha of result.commits)
    io.out(
      `The commit ${sha.slice(0, 12)} made of these files is still in git history; the revert is an uncommitted change (git revert ${sha.slice(0, 12)} would record it).\n`,
    );
  return result.refused.length > 0 ? 4 : 0;
}
