import { sessionFor } from "../../../app/checkpoints.ts";
import { rewindSession } from "../../../app/rewind-session.ts";
import { UsageFailure } from "../../../core/errors/usage-failure.ts";
import type { CommandContext } from "../command-context.ts";
import { openRuntime } from "../open-runtime.ts";

/** `pencil rewind N [ID]`: the session's pending changes go back to checkpoint N; later staging and conversation are dropped. */
export async function run(ctx: CommandContext): Promise<number> {
  const [nText, id] = ctx.args.positionals;
  const n = Number(nText);
  if (!nText || !Number.isInteger(n) || n < 1)
    throw new UsageFailure("rewind needs a checkpoint number, e.g. pencil rewind 2 (see them with pencil steps)");
  const runtime = openRuntime(ctx);
  const session = sessionFor(runtime, id);
  const result = rewindSession(runtime, session, n);
  const { io } = ctx;
  io.out(
    `Session ${session.id} is back at checkpoint ${n}: ${result.droppedCheckpoints} later checkpoint(s) and ${result.droppedMessages} later message(s) dropped.\n`,
  );
  if (result.changeset) {
    io.out(`Pending changeset ${result.changeset.id}: ${result.changeset.files.map((f) => f.path).join(", ")}\n`);
    io.out(
      `Review it with: pencil review ${result.changeset.id}   ·   continue the session with: pencil agent -c "…"\n`,
    );
  } else {
    io.out("Nothing is staged at that point.\n");
  }
  return 0;
}
