import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { createRunCommandTool, type SandboxChoice } from "../../tools/run-command.ts";
import { sandboxAvailable } from "../../core/sandbox/namespace.ts";
import { formatCommandReport, parseCommandReport } from "../../render/command-result.ts";
import { tempDir, writeTree } from "../support/temp.ts";
import { toolContext } from "../support/tool-context.ts";

// A failure early in a long output is not lost with the output's start: the model gets
// its lines, and so does the person.

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
const RUNTIME_ENV = { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`, LANG: "C.UTF-8" };
const modes: SandboxChoice[] = sandboxAvailable() ? ["namespace", "plain"] : ["plain"];

// 40,000 lines of noise after the failure: far more than the output the model is given.
const SCRIPT = `console.log("TAP version 13"); console.log("not ok 1 - adds"); console.log("  expected: 3"); console.log("  actual: 2"); for (let i = 0; i < 40000; i++) console.log("noise line " + i); process.exit(1);`;

describe.each(modes)("run_command's first failure (%s)", (sandbox) => {
  test("a failure cut from the start of a long output is given back before the output's end", async () => {
    const root = tempDir("pencil-ff-ws-");
    made.push(root);
    writeTree(root, { "fail.js": SCRIPT });
    const t = toolContext(root);
    const tool = createRunCommandTool({ sandbox, scratchParent: tempDir("pencil-ff-parent-"), parentEnv: RUNTIME_ENV });
    const out = await t.run(tool, { command: `${process.execPath} fail.js` });
    await tool.close?.();
    expect(out).toContain("Exit code 1");
    expect(out).toMatch(/were cut/);
    expect(out).toContain("First failure");
    expect(out).toContain("not ok 1 - adds");
    expect(out).toContain("actual: 2");
    expect(out).toContain("noise line 39999");
    const report = parseCommandReport(out)!;
    expect(report.output.at(-1)).toBe("noise line 39999");
    const shown = formatCommandReport(report, { color: false });
    expect(shown).toContain("not ok 1 - adds");
    expect(shown).toContain("noise line 39999");
  });

  test("a passing long output gets no failure block", async () => {
    const root = tempDir("pencil-ff-ws-");
    made.push(root);
    writeTree(root, { "pass.js": SCRIPT.replace("process.exit(1)", "process.exit(0)") });
    const t = toolContext(root);
    const tool = createRunCommandTool({ sandbox, scratchParent: tempDir("pencil-ff-parent-"), parentEnv: RUNTIME_ENV });
    const out = await t.run(tool, { command: `${process.execPath} pass.js` });
    await tool.close?.();
    expect(out).toContain("Exit code 0");
    expect(out).not.toContain("First failure");
  });
});
