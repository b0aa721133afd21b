import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { brainDir } from "../../../brain/brain-dir.ts";
import { startTimeOf } from "../../../core/process-alive.ts";
import { lockFileOf } from "../../../core/workspace-lock.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { textReply } from "../../support/fake-openai-server.ts";
import { baseEnv, modelWorld } from "../../support/cli-world.ts";
import { runCli, runCliPty } from "../../support/cli.ts";
import { givePristineBrain } from "../../support/pristine-brain.ts";
import { tempDir } from "../../support/temp.ts";
import { bundledStdioServer } from "../../support/mcp-stdio-server.ts";

// Every wait longer than a second says, in a terminal, what it waits on and how to stop it;
// a wait that ends sooner, and any run without a terminal, prints nothing of the kind.

/** Live processes standing in for another Pencil: they hold a lock by being alive. */
const holders: ReturnType<typeof Bun.spawn>[] = [];
afterEach(() => {
  for (const p of holders.splice(0)) p.kill("SIGKILL");
});

function liveProcess(): ReturnType<typeof Bun.spawn> {
  const proc = Bun.spawn(["sleep", "60"], { stdout: "ignore", stderr: "ignore" });
  holders.push(proc);
  return proc;
}

/** A workspace lock as another Pencil applying there would hold it. */
function holdWorkspaceLock(pencilHome: string, workspace: string): { pid: number; file: string; end: () => void } {
  const proc = liveProcess();
  const file = lockFileOf(pencilHome, workspace);
  mkdirSync(join(file, ".."), { recursive: true });
  const holder = {
    pid: proc.pid,
    start: startTimeOf(proc.pid),
    host: hostname(),
    op: "apply",
    workspace,
    since: new Date().toISOString(),
  };
  writeFileSync(file, `${JSON.stringify(holder)}\n`);
  return { pid: proc.pid, file, end: () => proc.kill("SIGKILL") };
}

describe("a lock another process holds", () => {
  test("the workspace lock: after a second, the holder's pid, what it does, Ctrl-C, and the file to remove; Ctrl-C stops the wait", async () => {
    const env = baseEnv();
    const workspace = tempDir("pencil-ws-");
    const lock = holdWorkspaceLock(env.PENCIL_HOME!, workspace);
    const started = Date.now();
    const { code, output } = await runCliPty(["undo", "cs-none", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [{ expect: "Ctrl-C to stop", send: "\x03" }],
    });
    const line = output.slice(output.indexOf("Waiting"));
    expect(line).toContain(`pid ${lock.pid}`);
    expect(line).toContain("apply since");
    expect(line).toContain(`remove ${lock.file}`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(code).not.toBe(0);
  }, 20_000);

  test("the workspace lock: the wait goes on once the holder is gone; with no terminal, and when the lock is free, nothing is said", async () => {
    const env = baseEnv();
    const workspace = tempDir("pencil-ws-");
    const lock = holdWorkspaceLock(env.PENCIL_HOME!, workspace);
    const { output } = await runCliPty(["undo", "cs-none", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [{ expect: `pid ${lock.pid}`, send: "", beforeSend: lock.end }],
    });
    // The holder died: its lock is stale, so undo went on (and found no such changeset: an id undo takes the lock for).
    expect(output.slice(output.indexOf(`pid ${lock.pid}`))).toContain("cs-none");
    const free = await runCliPty(["undo", "cs-none", "-w", workspace], { cwd: workspace, env, steps: [] });
    expect(free.output).not.toContain("Waiting");
    const again = holdWorkspaceLock(env.PENCIL_HOME!, workspace);
    setTimeout(again.end, 1500);
    const piped = await runCli(["undo", "cs-none", "-w", workspace], { cwd: workspace, env });
    expect(piped.stderr + piped.stdout).not.toContain("Waiting");
  }, 30_000);

  test("the brain lock: after a second, the holder's pid and Ctrl-C; the dump goes on once the holder is gone", async () => {
    const env = baseEnv();
    // The brain exists already: once the lock is free the dump opens it (its creation is brain-cli's quick start).
    await givePristineBrain(env.PENCIL_HOME!);
    const holder = liveProcess();
    writeFileSync(
      `${brainDir(env.PENCIL_HOME!)}.lock`,
      `${JSON.stringify({ pid: holder.pid, start: startTimeOf(holder.pid), host: hostname() })}\n`,
    );
    const { code, output } = await runCliPty(["brain", "dump", "a note while another holds the brain"], {
      cwd: env.HOME!,
      env,
      timeoutMs: 40_000,
      steps: [{ expect: `pid ${holder.pid}`, send: "", beforeSend: () => holder.kill("SIGKILL") }],
    });
    const line = output.slice(output.indexOf("Waiting for the brain"));
    expect(line).toContain("Ctrl-C to stop");
    expect(line).toContain("delete the lock file");
    expect(code).toBe(0);
  }, 45_000);
});

describe("a run's waits", () => {
  test.skipIf(!sandboxAvailable())(
    "a running command is named with its own seconds; the model is named while it is awaited, between steps too",
    async () => {
      const { workspace, groq, env } = await modelWorld();
      groq.enqueue(
        // Each answer is late: the spinner names the model while it waits, before its first byte.
        { kind: "reply", toolCalls: [{ name: "run_command", arguments: { command: "sleep 1.5" } }], delayMs: 2500 },
        { kind: "reply", text: "Slept.", delayMs: 2500 },
      );
      const { code, output } = await runCliPty(["agent", "sleep a bit", "--allow", "Run(sleep 1.5)", "-w", workspace], {
        cwd: workspace,
        env,
        steps: [],
      });
      expect(code).toBe(0);
      expect(output).toMatch(/waiting for groq:openai\/gpt-oss-120b · 2s · Ctrl-C to stop/);
      expect(output).toMatch(/running sleep 1\.5 · \d+s · Ctrl-C to stop/);
      // After the command the model's second answer is awaited with the spinner up again, counting that wait's own
      // seconds (not the run's: by then more than four had gone by).
      const after = output.slice(output.lastIndexOf("running sleep 1.5"));
      const seconds = [...after.matchAll(/waiting for groq:openai\/gpt-oss-120b · (\d+)s/g)].map((m) => Number(m[1]));
      expect(seconds).toContain(2);
      expect(Math.max(...seconds)).toBeLessThanOrEqual(3);
    },
    30_000,
  );

  test("an MCP server slow to start is named while the run waits for it", async () => {
    const { workspace, groq, env } = await modelWorld();
    // One file outside the repository (see bundledStdioServer): its start searches that file, not the whole checkout.
    const server = await bundledStdioServer();
    mkdirSync(env.PENCIL_HOME!, { recursive: true });
    const settings = (args: string[]) =>
      writeFileSync(
        join(env.PENCIL_HOME!, "settings.json"),
        JSON.stringify({ mcpServers: { docs: { command: process.execPath, args: [server, "docs", ...args] } } }),
      );
    settings(["-", "--slow"]);
    groq.enqueue(textReply("Nothing to do."));
    const slow = await runCliPty(["ask", "anything?", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [{ expect: "[Enter] done", send: "\r" }],
    });
    expect(slow.output).toMatch(/Starting MCP server "docs" \(\S+\); it is given \d+ s\. Ctrl-C to stop\./);
    // The run went on with the server once it answered.
    expect(slow.output).toContain("Nothing to do.");
  }, 30_000);
});
