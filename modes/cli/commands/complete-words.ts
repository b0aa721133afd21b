import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { pencilHomeOf } from "../../../core/pencil-home.ts";
import { ChangesetStore } from "../../../core/staging/changeset-store.ts";
import type { CommandContext } from "../command-context.ts";

/**
 * `pencil __complete ids` (hidden): the changeset ids of this workspace, newest first,
 * one a line, for a completion script to offer. Prints nothing rather than fail: a
 * shell completing a word must never show an error.
 */
export async function run(ctx: CommandContext): Promise<number> {
  if (ctx.args.positionals[0] !== "ids") return 0;
  try {
    const root = realpathSync(resolve(ctx.args.workspace ?? process.cwd()));
    const ids = new ChangesetStore(pencilHomeOf(ctx.env))
      .list()
      .filter((cs) => cs.workspace === root)
      .map((cs) => cs.id)
      .reverse();
    if (ids.length) ctx.io.out(`${ids.join("\n")}\n`);
  } catch {
    // No state yet, or an unreadable one: nothing to offer.
  }
  return 0;
}
