import { UsageFailure } from "../../../core/errors/usage-failure.ts";
import { completionScript } from "../completion/completion-scripts.ts";
import { completionSpec, SHELLS, type Shell } from "../completion/completion-spec.ts";
import type { CommandContext } from "../command-context.ts";

/** `pencil completion bash|zsh|fish`: prints the shell's completion script. */
export async function run(ctx: CommandContext): Promise<number> {
  const [shell, ...extra] = ctx.args.positionals;
  if (!shell || !(SHELLS as readonly string[]).includes(shell) || extra.length) {
    throw new UsageFailure(
      `Use: pencil completion ${SHELLS.join("|")}, e.g. pencil completion bash > ~/.local/share/bash-completion/completions/pencil`,
    );
  }
  const { COMMAND_NAMES } = await import("../command-names.ts");
  const { SUBCOMMANDS } = await import("./brain.ts");
  const { ACTIONS } = await import("./recover.ts");
  const specs = completionSpec(COMMAND_NAMES, { brain: SUBCOMMANDS, recover: ACTIONS, completion: SHELLS });
  ctx.io.out(completionScript(shell as Shell, specs));
  return 0;
}
