import { versionLine } from "../../core/installation.ts";
import { PencilError } from "../../core/errors/pencil-error.ts";
import { UsageFailure } from "../../core/errors/usage-failure.ts";
import { closest } from "../../core/did-you-mean.ts";
import { parseCli } from "./args.ts";
import { loadConfig } from "./config-files.ts";
import { commandHelp } from "./command-help.ts";
import { HELP } from "./help.ts";
import { machineIO, processIO, type CliIO } from "./io.ts";
import type { Env } from "../../core/pencil-home.ts";
import { installStopHandlers } from "../../app/stop-on-signal.ts";
import type { Command } from "./command-context.ts";
import { COMMAND_NAMES, type CommandName, type HiddenCommandName } from "./command-names.ts";
import { tellWaitsTo } from "../../core/wait-notice.ts";

// Lazy: a command's dependencies (AI SDK, grammY, figlet…) load only when it runs.
const COMMANDS: Record<CommandName | HiddenCommandName, () => Promise<Command>> = {
  agent: () => import("./commands/agent.ts"),
  plan: () => import("./commands/plan.ts"),
  ask: () => import("./commands/ask.ts"),
  review: () => import("./commands/review.ts"),
  undo: () => import("./commands/undo.ts"),
  log: () => import("./commands/log.ts"),
  recover: () => import("./commands/recover.ts"),
  steps: () => import("./commands/steps.ts"),
  rewind: () => import("./commands/rewind.ts"),
  fork: () => import("./commands/fork.ts"),
  discard: () => import("./commands/discard.ts"),
  demo: () => import("./commands/demo.ts"),
  doctor: () => import("./commands/doctor.ts"),
  wakeup: () => import("./commands/wakeup.ts"),
  telegram: () => import("./commands/telegram.ts"),
  brain: () => import("./commands/brain.ts"),
  completion: () => import("./commands/completion.ts"),
  // Hidden: what a completion script asks at completion time (changeset ids).
  __complete: () => import("./commands/complete-words.ts"),
};

/** Parses argv, runs the command, and maps failures to exit codes; never throws. */
export async function main(
  argv: string[],
  env: Env = process.env,
  io?: CliIO,
  startDir: string | null = process.cwd(),
): Promise<number> {
  // The user's $PENCIL_HOME/.env fills in what the environment and Pencil's .env leave unset.
  const config = loadConfig(env, startDir);
  io ??= processIO(env);
  // With --json a failure is a JSON document on stdout too, unless the command already wrote its document.
  let jsonOwed = false;
  let removeStop = () => {};
  let removeWaits = () => {};
  try {
    const inv = io.invocation ?? "pencil";
    const args = parseCli(argv, inv);
    if (args.version) {
      const { default: pkg } = await import("../../package.json", { with: { type: "json" } });
      io.out(versionLine(pkg.version));
      return 0;
    }
    const ownHelp = args.help ? commandHelp(args.command, inv) : undefined;
    if (ownHelp !== undefined) {
      io.out(ownHelp);
      return 0;
    }
    // A stopped Pencil ends its commands and servers, saves the session and exits 128 + the signal; in a terminal
    // Ctrl-C keeps its own meaning (stop the run, then review), and the bot stops itself.
    if (args.command !== "telegram" && !args.help)
      removeStop = installStopHandlers(
        io.interactive ? ["SIGTERM", "SIGHUP"] : ["SIGTERM", "SIGHUP", "SIGINT"],
        io.err,
      );
    // A wait longer than a second (a lock another process holds, the brain or an MCP server starting) says what it
    // waits on and how to stop, on a terminal only: a log or a pipe gets no such lines.
    if (process.stderr.isTTY)
      removeWaits = tellWaitsTo((text) => io.err(`\r\x1b[2K${io.colors.yellow(`⏳ ${text}`)}\n`));
    // Bare `pencil` in a terminal opens a session; anywhere else it is the help.
    if (args.command === "" && !args.help && io.interactive)
      return await (await import("./commands/wakeup.ts")).session({ args, env, io, config });
    if (args.help || args.command === "") {
      io.out(HELP);
      return 0;
    }
    if (!Object.hasOwn(COMMANDS, args.command)) {
      const guess = closest(args.command, COMMAND_NAMES);
      throw new UsageFailure(
        `Unknown command "${args.command}".${guess ? ` Did you mean ${guess}?` : ""} Run \`${inv} --help\` for the list.`,
      );
    }
    jsonOwed = args.json;
    const command = await COMMANDS[args.command as CommandName]();
    const commandIO = args.json ? machineIO(io) : io;
    if (args.json) {
      const out = commandIO.out;
      commandIO.out = (text) => {
        jsonOwed = false;
        out(text);
      };
    }
    if (args.verbose) commandIO.verbose = true;
    return await command.run({ args, env, io: commandIO, config });
  } catch (error) {
    const code = reportFailure(io, error);
    if (jsonOwed) io.out(`${JSON.stringify({ error: { message: failureText(error), exitCode: code } })}\n`);
    return code;
  } finally {
    removeStop();
    removeWaits();
  }
}

/** A failure's words for a reader: its own message when raised on purpose, else the error's. */
function failureText(error: unknown): string {
  if (PencilError.isInstance(error)) return error.userMessage;
  return error instanceof Error ? error.message : String(error);
}

/** Prints a failure the way a user can act on it and returns its exit code. */
function reportFailure(io: CliIO, error: unknown): number {
  const c = io.colors;
  // Messages from the layers below suggest `pencil <command>`: spell it the way this Pencil was started.
  const inv = io.invocation ?? "pencil";
  const say = (text: string) =>
    io.err(inv === "pencil" ? text : text.replace(/(^|[\s`(])pencil (?=[a-z-])/g, `$1${inv} `));
  // Every failure raised on purpose says its own exit code and words; anything else is a bug's message, exit 1.
  if (PencilError.isInstance(error)) {
    say(`${c.red(error.label)} ${error.userMessage}\n`);
    if (error.exitCode === 2) return 2;
    if (process.env.PENCIL_DEBUG && error.stack) io.err(`${error.stack}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  say(`${c.red("error:")} ${message}\n`);
  if (process.env.PENCIL_DEBUG && error instanceof Error && error.stack) io.err(`${error.stack}\n`);
  return 1;
}
