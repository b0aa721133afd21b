import { undoInWorkspace } from "../../../app/undo-changeset.ts";
import type { CommandContext } from "../main.ts";
import { openRuntime } from "../open-runtime.ts";

/** `pencil undo [ID]`: reverts an applied changeset (the latest when no ID), refusing files changed since. Exit 4 when some were refused. */
export async function run(ctx: CommandContext): Promise<number> {
  const runtime = openRuntime(ctx);
  const { io } = ctx;
  const c = io.colors;
  const result = undoInWorkspace(runtime, ctx.args.positionals[0]);
  for (const path of result.reverted) io.out(`${c.green("reverted")} ${path}\n`);
  for (const refused of result.refused) io.out(`${c.red("kept")}     ${refused.path}: ${refused.reason}\n`);
  io.out(`Undo of ${result.changesetId} (apply ${result.applyId}): ${result.state}.\n`);
  return result.refused.length > 0 ? 4 : 0;
}
