import { findInterruptedApplies } from "../../core/apply/recovery.ts";
import { lockHeld } from "../../core/workspace-lock.ts";
import { createRuntime, type Runtime } from "../../app/runtime.ts";
import type { CommandContext } from "./command-context.ts";

/** Builds the runtime from the common options, shows settings warnings, and warns about an interrupted apply. */
export function openRuntime(ctx: CommandContext): Runtime {
  const { args, env, io } = ctx;
  const runtime = createRuntime({
    env,
    ...(args.workspace ? { workspace: args.workspace } : {}),
    allow: args.allow,
    deny: args.deny,
    ...(args.model ? { model: args.model } : {}),
    projectDoc: !args.noProjectDoc,
  });
  for (const warning of runtime.settings.warnings) io.err(`${io.colors.yellow("warning:")} ${warning}\n`);
  for (const interrupted of findInterruptedApplies(runtime.journalDir)) {
    // One that another process is running right now is not interrupted.
    if (lockHeld(runtime.pencilHome, interrupted.workspace)) continue;
    io.err(`${io.colors.red(`interrupted ${interrupted.operation}`)} ${interrupted.applyId}: ${interrupted.message}\n`);
  }
  return runtime;
}
