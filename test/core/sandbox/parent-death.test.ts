// A Pencil killed outright (SIGKILL, the OOM killer) gets no chance to stop what it started: the kernel must. Each
// sandboxed command and MCP server dies with the Pencil process that started it, with its whole namespace.
import { describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { pidsRunning } from "../../support/processes.ts";
import { tempDir } from "../../support/temp.ts";

const CHECKOUT = join(import.meta.dir, "..", "..", "..");
const hasNamespace = sandboxAvailable();
const imported = (rel: string) => JSON.stringify(join(CHECKOUT, rel));

/** Waits until `done()` or `ms` pass; returns whether it became true. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (done()) return true;
    await Bun.sleep(50);
  }
  return done();
}

/**
 * Runs `program` in a fresh Bun process (its argument a private directory), waits until `count` processes run `argv`
 * (the sandboxed ones it starts), SIGKILLs it, and says whether every one of them is gone within two seconds.
 */
async function survivorsAfterKill(program: string, argv: string[], count: number): Promise<boolean> {
  const dir = tempDir("pencil-pdeath-");
  mkdirSync(join(dir, "ws"));
  mkdirSync(join(dir, "home"));
  const child = spawn(process.execPath, ["-e", program, dir], { stdio: ["ignore", "ignore", "inherit"] });
  try {
    expect(await until(() => pidsRunning(argv).length >= count, 30_000)).toBe(true);
  } finally {
    child.kill("SIGKILL");
  }
  await new Promise((resolve) => child.once("exit", resolve));
  return until(() => pidsRunning(argv).length === 0, 2_000);
}

describe("a Pencil killed by SIGKILL takes its sandboxed processes with it", () => {
  test.skipIf(!hasNamespace)(
    "a command run_command started, a child it put in a session of its own included, is gone at once",
    async () => {
      const sleeper = ["sleep", "271.828"];
      const program = `
import { createRunCommandTool } from ${imported("tools/run-command.ts")};
import { toolContext } from ${imported("test/support/tool-context.ts")};
const dir = process.argv.at(-1);
const t = toolContext(dir + "/ws", { home: dir + "/home" });
const tool = createRunCommandTool({ sandbox: "namespace", scratchParent: dir, realHome: dir + "/home", pencilHome: dir + "/ph", parentEnv: { PATH: "/usr/bin:/bin" } });
await t.run(tool, { command: "setsid ${sleeper.join(" ")} & ${sleeper.join(" ")}" });
`;
      expect(await survivorsAfterKill(program, sleeper, 2)).toBe(true);
    },
    60_000,
  );

  test.skipIf(!hasNamespace)(
    "a stdio server started by sandboxedLaunch (as an MCP server is) is gone at once",
    async () => {
      const sleeper = ["sleep", "314.159"];
      const program = `
import { spawn } from "node:child_process";
import { sandboxedLaunch } from ${imported("core/sandbox/namespace.ts")};
import { planHiding } from ${imported("core/sandbox/hiding.ts")};
const dir = process.argv.at(-1);
const launch = sandboxedLaunch({
  root: dir,
  dir: dir + "/work",
  command: "/bin/sh",
  args: ["-c", "${sleeper.join(" ")}"],
  env: { PATH: "/usr/bin:/bin" },
  hiding: planHiding({ realHome: dir + "/home", pencilHome: dir + "/ph", wsRoot: dir, scratchRoot: dir, path: "/usr/bin:/bin" }),
});
spawn(launch.command, launch.args, { env: launch.env, stdio: ["pipe", "pipe", "inherit"] });
await Bun.sleep(60_000);
`;
      expect(await survivorsAfterKill(program, sleeper, 1)).toBe(true);
    },
    60_000,
  );
});
