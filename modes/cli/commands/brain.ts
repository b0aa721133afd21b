import type { CommandContext } from "../main.ts";

/** `pencil brain …`: the second brain is a later capability; say so plainly instead of pretending. */
export async function run(ctx: CommandContext): Promise<number> {
  ctx.io.err("The second brain (brain dump/ask/list/reindex) is not part of this version of Pencil yet. Nothing was stored.\n");
  return 2;
}
