import { spawnSync } from "node:child_process";
import { sandboxAvailable } from "../../core/sandbox/namespace.ts";

/** How a stdio server's command is started: the command and arguments to spawn, and what confines it. */
export interface ConfinedCommand {
  command: string;
  args: string[];
  /** "network-off": in its own user and network namespace (only its own loopback); "none": as is. */
  confinement: "network-off" | "none";
}

let unshareMap: string | null | undefined;

/** The unshare flag that maps the current user into a new user namespace here, or null when none works. */
function userMapFlag(): string | null {
  if (unshareMap !== undefined) return unshareMap;
  unshareMap = null;
  if (process.platform === "linux" && sandboxAvailable()) {
    for (const flag of ["--map-current-user", "--map-root-user"]) {
      if (spawnSync("unshare", ["--user", flag, "--net", "true"], { stdio: "ignore", timeout: 5000 }).status === 0) {
        unshareMap = flag;
        break;
      }
    }
  }
  return unshareMap;
}

/**
 * Wraps a stdio MCP server's command so that, where the namespace sandbox works, it
 * has no network (a network namespace with only its own loopback) unless the owner's
 * settings open the network to commands. It does not yet get the command sandbox's
 * read-only file system or hidden secrets: that needs a long-running entry point in
 * core/sandbox (its `runIn` runs a command to completion).
 */
export function confineServer(command: string, args: string[], network: boolean): ConfinedCommand {
  if (network) return { command, args, confinement: "none" };
  const flag = userMapFlag();
  if (!flag) return { command, args, confinement: "none" };
  return { command: "unshare", args: ["--user", flag, "--net", "--", command, ...args], confinement: "network-off" };
}
