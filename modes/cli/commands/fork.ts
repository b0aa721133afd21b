import { forkAt, sessionFor } from "../../../app/checkpoints.ts";
import { UsageFailure } from "../../../core/errors/usage-failure.ts";
import type { CommandContext } from "../command-context.ts";
import { openRuntime } from "../open-runtime.ts";

/** `pencil fork N DIR [ID]`: a copy of the workspace with the changes up to checkpoint N, in a new directory. */
export async function run(ctx: CommandContext): Promise<number> {
  const [nText, dir, id] = ctx.args.positionals;
  const n = Number(nText);
  if (!nText || !Number.isInteger(n) || n < 1 || !dir)
    throw new UsageFailure(
      "fork needs a checkpoint number and a new directory, e.g. pencil fork 2 ../try-it (see the checkpoints with pencil steps)",
    );
  const runtime = openRuntime(ctx);
  const session = sessionFor(runtime, id);
  const result = forkAt(runtime, session, n, dir);
  const { io } = ctx;
  io.out(
    `Wrote ${result.dir}: the workspace with checkpoint ${n} of session ${session.id} (${result.staged.length} staged file(s): ${result.staged.join(", ") || "none"}).\n`,
  );
  if (result.skipped.length)
    io.out(io.colors.dim(`Not copied (Pencil never reads them): ${result.skipped.join(", ")}\n`));
  io.out("The workspace itself is unchanged.\n");
  return 0;
}
