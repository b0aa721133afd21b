import { discardChangeset } from "../../../app/discard-changeset.ts";
import { assertSameWorkspace } from "../../../app/apply-reviewed.ts";
import type { CommandContext } from "../command-context.ts";
import { openRuntime } from "../open-runtime.ts";

/** `pencil discard [ID]`: removes a pending changeset (the workspace's latest when no ID); asks first in a terminal. */
export async function run(ctx: CommandContext): Promise<number> {
  const runtime = openRuntime(ctx);
  const { io } = ctx;
  const id = ctx.args.positionals[0];
  const cs = id ? runtime.store.load(id) : runtime.store.latestPending(runtime.ws.root);
  if (!cs) {
    io.out(`No pending changeset for ${runtime.ws.root}.\n`);
    return 0;
  }
  assertSameWorkspace(runtime, cs);
  if (io.interactive && cs.status === "pending") {
    const answer = await io.key(
      `Discard changeset ${cs.id} — ${cs.goal.split("\n", 1)[0]!.slice(0, 80)} (${cs.files.map((f) => f.path).join(", ")})? Nothing of it will be applied. [y/N] `,
      "yn",
    );
    if (answer !== "y") {
      io.out("Kept.\n");
      return 0;
    }
  }
  discardChangeset(runtime, cs);
  io.out(`Discarded ${cs.id}; nothing of it was applied.\n`);
  return 0;
}
