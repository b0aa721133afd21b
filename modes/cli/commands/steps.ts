import { listCheckpoints, sessionFor } from "../../../app/checkpoints.ts";
import { formatSteps } from "../../../render/steps-view.ts";
import type { CommandContext } from "../command-context.ts";
import { openRuntime } from "../open-runtime.ts";

/** `pencil steps [ID]`: the checkpoints of a session (or of a changeset's session; the workspace's latest when no ID). */
export async function run(ctx: CommandContext): Promise<number> {
  const runtime = openRuntime(ctx);
  const session = sessionFor(runtime, ctx.args.positionals[0]);
  const checkpoints = listCheckpoints(session);
  if (ctx.args.json) {
    ctx.io.out(
      `${JSON.stringify({ session: session.id, changeset: session.header.changeset ?? null, checkpoints }, null, 2)}\n`,
    );
    return 0;
  }
  ctx.io.out(
    `${ctx.io.colors.bold(`Session ${session.id}`)} — ${session.header.goal.split("\n", 1)[0]!.slice(0, 100)}\n`,
  );
  ctx.io.out(formatSteps(checkpoints, { color: ctx.io.color }));
  if (checkpoints.some((c) => !c.reviewed))
    ctx.io.out(
      ctx.io.colors.dim(
        `Go back with: pencil rewind N ${session.id}   ·   try one out: pencil fork N DIR ${session.id}\n`,
      ),
    );
  return 0;
}
