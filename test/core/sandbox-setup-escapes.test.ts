// Attempts to get around the namespace sandbox's setup: what runs before the command is confined (the launcher
// shell, unshare, the Bun setup) must not take anything from the confined program's environment or scratch.
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { planHiding } from "../../core/sandbox/hiding.ts";
import { sandboxAvailable, sandboxedLaunch } from "../../core/sandbox/namespace.ts";
import { tempDir } from "../support/temp.ts";

const hasNamespace = sandboxAvailable();
if (!hasNamespace) console.warn("sandbox-setup-escapes.test: no namespace sandbox here; these tests are SKIPPED.");

describe("sandboxedLaunch (stdio MCP servers): the program's environment stays the program's", () => {
  test.skipIf(!hasNamespace)(
    "BASH_ENV, BUN_OPTIONS or PATH in a server's environment run nothing outside the sandbox",
    () => {
      const root = realpathSync(tempDir("pencil-mcp-"));
      const dir = join(root, "work");
      // Outside every place the sandbox lets the program write: only an unconfined process can make it.
      const outside = realpathSync(tempDir("pencil-outside-"));
      const marker = join(outside, "escaped");
      const fakeBin = join(outside, "bin");
      mkdirSync(fakeBin);
      const launch = sandboxedLaunch({
        root,
        dir,
        command: "/bin/sh",
        args: ["-c", 'test "$SERVER_TOKEN" = kept'],
        network: false,
        env: {
          PATH: `${fakeBin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
          // bash expands BASH_ENV (command substitution included) before any non-interactive `bash -c`.
          BASH_ENV: `$(echo bash > ${marker})`,
          SERVER_TOKEN: "kept",
        },
        hiding: planHiding({
          realHome: tempDir(),
          pencilHome: tempDir(),
          wsRoot: root,
          scratchRoot: root,
          path: process.env.PATH ?? "/usr/bin:/bin",
        }),
      })!;
      // Spawned as the MCP transport does: the launch's own environment, what it gives for the program merged in.
      const r = spawnSync(launch.command, launch.args, { env: launch.env, encoding: "utf8", timeout: 20_000 });
      expect(existsSync(marker)).toBe(false);
      // The program still got its own variables.
      expect(r.status).toBe(0);
    },
    30_000,
  );
});
