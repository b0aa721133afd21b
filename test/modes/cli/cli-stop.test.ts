import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { INDEX } from "../../support/cli.ts";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { tempDir } from "../../support/temp.ts";
import { pidsRunning } from "../../support/processes.ts";
import { withTranspilerCache } from "../../support/transpiler-cache.ts";

// A stopped Pencil stops its commands: the real CLI (`bun index.ts agent`) with the fake model running a sleep,
// sent each stopping signal mid-command.

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (cond()) return true;
    await Bun.sleep(25);
  }
  return cond();
}

/** Runs `pencil agent` with the fake model running a sleep, sends `signal` mid-command, and checks what is left. */
async function stopMidCommand(signal: "SIGTERM" | "SIGHUP" | "SIGINT", n: number): Promise<void> {
  const { workspace, groq, env } = await modelWorld({ "a.txt": "alpha\n" });
  const sleep = ["sleep", `4${n}.${process.pid}`];
  groq.enqueue(
    toolCallReply([{ name: "create_file", arguments: { path: "b.txt", content: "beta\n" } }]),
    toolCallReply([{ name: "run_command", arguments: { command: `${sleep.join(" ")}; echo never > never.txt` } }]),
    textReply("Done."),
  );
  const tmp = tempDir("pencil-stop-tmp-");
  const proc = Bun.spawn([process.execPath, INDEX, "agent", "make b", "--allow", "Run(sleep *)", "-w", workspace], {
    cwd: workspace,
    env: withTranspilerCache({ ...env, TMPDIR: tmp }),
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const stderr = new Response(proc.stderr).text();
  try {
    expect(await until(() => pidsRunning(sleep).length > 0, 60_000)).toBe(true);
    expect(readdirSync(tmp).some((name) => name.startsWith("pencil-run-"))).toBe(true);
    proc.kill(signal);
    const code = await proc.exited;
    expect(`${signal}: ${code}`).toBe(`${signal}: ${128 + constants.signals[signal]}`);
    expect(await stderr).toContain(`Pencil stopped (${signal})`);
    expect(await stderr).toContain("the session is saved");
    // The sleep is gone at once (its namespace ended before Pencil exited), and so is the scratch.
    expect(pidsRunning(sleep)).toEqual([]);
    expect(readdirSync(tmp).filter((name) => name.startsWith("pencil-run-"))).toEqual([]);
    expect(existsSync(join(workspace, "never.txt"))).toBe(false);
    // What was staged before the stop is saved for review.
    const log = Bun.spawnSync([process.execPath, INDEX, "log", "--json", "-w", workspace], {
      cwd: workspace,
      env: withTranspilerCache(env),
    });
    expect(log.stdout.toString()).toContain("b.txt");
  } finally {
    proc.kill("SIGKILL");
  }
}

describe("a stopped Pencil stops its commands", () => {
  // The three at once: each waits mostly for its sleep to start.
  test.skipIf(!sandboxAvailable())(
    "(needs the namespace sandbox) SIGTERM, SIGHUP and SIGINT mid-command: no process and no scratch left, the session saved, exit 128 + the signal",
    async () => {
      await Promise.all([stopMidCommand("SIGTERM", 1), stopMidCommand("SIGHUP", 2), stopMidCommand("SIGINT", 3)]);
    },
    120_000,
  );
});
