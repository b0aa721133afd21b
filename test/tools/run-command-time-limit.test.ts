import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { sandboxAvailable } from "../../core/sandbox/namespace.ts";
import { createRunCommandTool, type RunCommandOptions } from "../../tools/run-command.ts";
import type { ToolLimits } from "../../core/tool-limits.ts";
import { tempDir } from "../support/temp.ts";
import { toolContext } from "../support/tool-context.ts";

const PATH = `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`;

/** A workspace, its context with `limits`, and run_command as the app makes it (no timeout option of its own). */
function setup(limits: Partial<ToolLimits>, options: RunCommandOptions = {}) {
  const dir = tempDir("pencil-time-limit-");
  const ws = join(dir, "ws");
  mkdirSync(ws);
  mkdirSync(join(dir, "home"));
  const t = toolContext(ws, { home: join(dir, "home"), limits });
  const tool = createRunCommandTool({
    scratchParent: dir,
    realHome: join(dir, "home"),
    pencilHome: join(dir, "ph"),
    parentEnv: { PATH },
    ...options,
  });
  return { t, tool };
}

/**
 * Checks that `out` says the command timed out at its limit of `limit` seconds, and how long it ran: at least the
 * limit (the clock starts before the timer), and far below the 30 s its sleep would take (loose, for a loaded machine).
 */
function expectTimedOut(out: string, limit: number): void {
  const said = out.match(/^Timed out after (\d+\.\d+) s: it ran until its time limit of ([\d.]+) s/m);
  expect(said?.[2]).toBe(String(limit));
  const ran = Number(said?.[1]);
  expect(ran).toBeGreaterThanOrEqual(limit);
  expect(ran).toBeLessThan(25);
}

describe("run_command's time limit", () => {
  if (!sandboxAvailable())
    console.warn("run-command-time-limit.test: no namespace sandbox here; these run in plain mode.");

  test("limits.commandSeconds is the limit of a call without a timeout; the answer names it and how long it ran", async () => {
    const { t, tool } = setup({ commandSeconds: 1 });
    const started = performance.now();
    const out = await t.run(tool, { command: "echo started; sleep 30" });
    // Far from the 30 s sleep: the limit, not the command, ended it (the bound is loose for a loaded machine).
    expect(performance.now() - started).toBeLessThan(25_000);
    expectTimedOut(out, 1);
    expect(out).toContain("limits.commandSeconds");
    expect(out).toContain("started");
    expect(out).toContain("run it again with a larger timeout");
    await tool.close?.();
  });

  test("a call's timeout sets its limit, below or above the default, up to limits.commandSecondsMax", async () => {
    const { t, tool } = setup({ commandSeconds: 120, commandSecondsMax: 2 });
    const short = await t.run(tool, { command: "sleep 30", timeout: 0.5 });
    expectTimedOut(short, 0.5);
    const over = await t.run(tool, { command: "echo quick", timeout: 900 });
    expect(over).toContain("Exit code 0");
    expect(over).toContain("the timeout asked for (900 s) is over the cap, so the command had 120 s");
    await tool.close?.();
  });

  test("a timeout over the cap gets the cap, said in the answer", async () => {
    const { t, tool } = setup({ commandSeconds: 1, commandSecondsMax: 1 });
    const out = await t.run(tool, { command: "sleep 30", timeout: 60 });
    expectTimedOut(out, 1);
    expect(out).toContain(
      "the timeout asked for (60 s) is over the cap, so the command had 1 s (limits.commandSecondsMax",
    );
    await tool.close?.();
  });

  test("the input schema keeps a call without timeout valid and refuses a timeout that is not a positive number", () => {
    const { tool } = setup({});
    expect(tool.inputSchema.safeParse({ command: "ls" }).success).toBe(true);
    expect(tool.inputSchema.safeParse({ command: "ls", timeout: 30 }).success).toBe(true);
    for (const timeout of [0, -1, "30"])
      expect(tool.inputSchema.safeParse({ command: "ls", timeout }).success).toBe(false);
  });

  test("the description gives the model the default and the cap the settings set", () => {
    const { tool } = setup({}, { timeoutMs: 300_000, timeoutCapMs: 1_800_000 });
    expect(tool.description).toContain("a 300 s time limit unless `timeout` asks for another (at most 1800 s)");
  });
});
