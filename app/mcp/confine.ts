import { existsSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { commandPath } from "../../core/sandbox/command-env.ts";
import { planHiding } from "../../core/sandbox/hiding.ts";
import { sandboxedLaunch } from "../../core/sandbox/namespace.ts";

/** How a stdio server's command is started: the command, arguments and environment to spawn, and what confines it. */
export interface ConfinedCommand {
  command: string;
  args: string[];
  /** What to spawn it with: in the sandbox PATH alone (the server's own environment is handed to it inside); else the server's. */
  env: Record<string, string>;
  /** "sandbox": in the command sandbox (read-only system, home, credentials and secrets hidden; no network unless opened); "none": as is. */
  confinement: "sandbox" | "none";
}

/** Where a stdio server runs: `root` a private directory of its own, `dir` (inside it) its working directory and home. */
export interface ServerPlace {
  root: string;
  dir: string;
}

/**
 * The directory a server's program needs to see, for an absolute path among its
 * command and arguments: the package it belongs to (nearest package.json, so its
 * node_modules come with it), else its own directory. Null for what is not an
 * existing absolute path, and for the home or an ancestor of it (that would show
 * the whole home; its secrets stay masked, but nothing more of it is shown).
 */
function keepFor(word: string, home: string | null): string | null {
  if (!isAbsolute(word) || !existsSync(word)) return null;
  let real: string;
  try {
    real = realpathSync(word);
  } catch {
    return null;
  }
  let dir = statSync(real).isDirectory() ? real : dirname(real);
  for (let d = dir; d !== "/" && d !== home; d = dirname(d)) {
    if (existsSync(join(d, "package.json"))) {
      dir = d;
      break;
    }
  }
  if (dir === "/" || (home !== null && (home === dir || home.startsWith(`${dir}/`)))) return null;
  return dir;
}

/**
 * Wraps a stdio MCP server's command so that, where the namespace sandbox works, it
 * runs in the command sandbox: read-only system, the owner's home, credentials,
 * PENCIL_HOME, .env files and host sockets hidden, other projects and the workspace
 * out of sight, writes only in its private directory and temporary space, and no
 * network unless the owner's settings open it. The program's own files (the
 * command's package and those its absolute arguments name) are shown read-only.
 * Where the sandbox is not available it runs as is.
 */
export function confineServer(
  command: string,
  args: string[],
  input: {
    network: boolean;
    place: ServerPlace;
    pencilHome: string;
    realHome?: string;
    /** Pencil's environment: the PATH whose toolchain the server is shown (default process.env). */
    env?: Record<string, string | undefined>;
    /** The server's own environment. */
    serverEnv: Record<string, string>;
  },
): ConfinedCommand {
  const realHome = input.realHome ?? homedir();
  let home: string | null = null;
  try {
    home = realpathSync(realHome);
  } catch {
    // no home: nothing to spare
  }
  const path = commandPath(input.env ?? process.env);
  const keep = [command, ...args].flatMap((w) => keepFor(w, home) ?? []);
  const launch = sandboxedLaunch({
    root: input.place.root,
    dir: input.place.dir,
    command,
    args,
    env: input.serverEnv,
    network: input.network,
    hiding: planHiding({
      realHome,
      pencilHome: input.pencilHome,
      wsRoot: input.place.root,
      scratchRoot: input.place.root,
      path,
      keep,
    }),
  });
  return launch ? { ...launch, confinement: "sandbox" } : { command, args, env: input.serverEnv, confinement: "none" };
}
