#!/usr/bin/env bun
// Entry point: only argv inspection happens here; every command is imported lazily
// so that --help and --version stay instant.
import { SETUP_MODE } from "./core/sandbox/setup-contract.ts";
import { STANDALONE } from "./core/standalone.ts";
import pkg from "./package.json" with { type: "json" };

const argv = process.argv.slice(2);

// The single executable is also its own sandbox setup: it has no setup file for Bun to run (core/sandbox/namespace.ts).
if (STANDALONE && argv[0] === SETUP_MODE) {
  const { runSetup } = await import("./core/sandbox/namespace-setup.ts");
  await runSetup(argv[1]);
}

// bin/pencil starts Bun in Pencil's own directory (so Bun reads Pencil's .env, not a
// workspace's); the caller's directory is where the command really runs. Only a start
// in Pencil's directory may say so: a workspace's .env must not move Pencil around.
// The single executable reads no .env at all (built with autoloadDotenv off) and starts where it is run.
const startDir = STANDALONE ? null : process.cwd(); // where Bun read its .env files
const callerCwd = process.env.PENCIL_CALLER_CWD;
delete process.env.PENCIL_CALLER_CWD;
if (!STANDALONE && callerCwd) {
  const { realpathSync } = await import("node:fs");
  if (realpathSync(process.cwd()) === realpathSync(import.meta.dir)) process.chdir(callerCwd);
}

/** Writes to stdout; a reader that went away (`pencil --help | head -1`) ends the program quietly, exit 0. */
async function print(text: string): Promise<void> {
  try {
    await Bun.write(Bun.stdout, text);
  } catch (error) {
    if ((error as { code?: unknown }).code !== "EPIPE") throw error;
  }
}
const first = argv[0];

/** Whether stdin and stdout are both a terminal. node:tty is loaded only here: importing it costs about 4 ms, as much
 * as the rest of `--help` together, and only bare `pencil` needs it. */
async function inTerminal(): Promise<boolean> {
  const { isatty } = await import("node:tty");
  return isatty(0) && isatty(1);
}

// Bun.write, not process.stdout: touching process.stdout sets up Node's stream machinery,
// which costs more than the rest of --help together.
if (first === "--version" || first === "-V" || first === "-v") {
  const { versionLine } = await import("./core/installation.ts");
  await print(versionLine(pkg.version));
} else if (
  (first === undefined && !(await inTerminal())) ||
  first === "-h" ||
  first === "--help" ||
  (first === "help" && argv.length === 1)
) {
  const { HELP } = await import("./modes/cli/help.ts");
  // Started as ./bin/pencil (not on PATH): the usage line says so.
  const invoked = process.env.PENCIL_INVOKED_AS;
  await print(invoked && invoked !== "pencil" ? HELP.replace("Usage: pencil ", `Usage: ${invoked} `) : HELP);
} else {
  const { main } = await import("./modes/cli/main.ts");
  // `pencil help agent` is `pencil agent --help`.
  const args = first === "help" ? [...argv.slice(1), "--help"] : argv;
  process.exitCode = await main(args, process.env, undefined, startDir);
}
