import type { Env } from "../../core/pencil-home.ts";
import type { CliArgs } from "./args.ts";
import type { ConfigSources } from "./config-files.ts";
import type { CliIO } from "./io.ts";

/** What every command receives. */
export interface CommandContext {
  args: CliArgs;
  env: Env;
  io: CliIO;
  /** The configuration files read at start (doctor names them). */
  config?: ConfigSources;
}

/** A command module: runs and returns the process exit code (README "Commands", exit codes). */
export interface Command {
  run(ctx: CommandContext): Promise<number>;
}
