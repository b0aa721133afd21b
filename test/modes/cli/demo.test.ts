import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { runCli, runCliPty } from "../../support/cli.ts";
import { tempDir } from "../../support/temp.ts";

function demoEnv(): Record<string, string> {
  const home = tempDir("pencil-demo-home-");
  // No model keys at all: the demo must need none.
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    PENCIL_HOME: join(home, ".pencil"),
    NO_COLOR: "1",
    TMPDIR: home,
  };
}

test("demo without a terminal prints the summary and diffs, applies nothing, exits 0", async () => {
  const env = demoEnv();
  const result = await runCli(["demo", "--keep"], { cwd: env.HOME!, env });
  expect(result.code).toBe(0);
  expect(result.stdout).toContain("3 files, +30 -3 (1 created, 2 modified)");
  expect(result.stdout).toContain("read .env denied");
  expect(result.stdout).toContain("+  const max = options.maxLength;");
  expect(result.stdout).toContain("Nothing was applied");
  expect(result.stdout).not.toContain("demo-secret-that-must-not-leak");
  const workspace = result.stdout.match(/examples\/demo at (\S+)/)![1]!;
  expect(readFileSync(join(workspace, "src/slugify.ts"), "utf8")).not.toContain("maxLength");
  expect(existsSync(join(workspace, "test/slugify-max-length.test.ts"))).toBe(false);
});

test("demo in a terminal applies what is approved in the copy and shows git diff", async () => {
  const env = demoEnv();
  const prompt = "[s]teps ";
  const { code, output } = await runCliPty(["demo", "--keep"], {
    cwd: env.HOME!,
    env,
    steps: [
      { expect: prompt, send: "Yes\r" }, // README.md: the word works as well as the key
      { expect: prompt, send: "n\r" }, // src/slugify.ts
      { expect: prompt, send: "y\r" }, // the new test
      // The test imports (through src/index.ts) the module just rejected: asked once more.
      { expect: "Apply as decided?", send: "y" },
    ],
  });
  expect(output).toContain("test/slugify-max-length.test.ts (approved) imports src/slugify.ts (rejected)");
  expect(output).toContain(
    "note: test/slugify-max-length.test.ts was written, but src/slugify.ts, which it imports, was not.",
  );
  expect(code).toBe(0);
  const workspace = output.match(/examples\/demo at (\S+)/)![1]!;
  expect(readFileSync(join(workspace, "README.md"), "utf8")).toContain("maxLength");
  expect(readFileSync(join(workspace, "src/slugify.ts"), "utf8")).not.toContain("maxLength");
  expect(existsSync(join(workspace, "test/slugify-max-length.test.ts"))).toBe(true);
  expect(output).toContain("git diff --stat");
  expect(output).toContain("README.md | 3 ++-");
});

test("in the demo, a rejection with a reason gets an honest answer instead of a crash", async () => {
  const env = demoEnv();
  const prompt = "[s]teps ";
  const { code, output } = await runCliPty(["demo"], {
    cwd: env.HOME!,
    env,
    steps: [
      { expect: prompt, send: "y\r" },
      { expect: prompt, send: "r" },
      { expect: "Reason", send: "please keep the old signature\r" },
      { expect: prompt, send: "y\r" },
      { expect: "Apply as decided?", send: "y" },
    ],
  });
  expect(code).toBe(0);
  expect(output).toContain("cannot act on your reason");
  expect(output).toContain("The agent staged nothing new.");
});

test("in the demo, n at the dependency question goes back to deciding, and approving all leaves the tests passing", async () => {
  const env = demoEnv();
  const prompt = "[s]teps ";
  const { code, output } = await runCliPty(["demo", "--keep"], {
    cwd: env.HOME!,
    env,
    steps: [
      { expect: prompt, send: "y" },
      { expect: prompt, send: "n" },
      { expect: prompt, send: "y" },
      { expect: "Apply as decided?", send: "n" },
      { expect: prompt, send: "a" },
      { expect: "[y/N]", send: "y" },
    ],
  });
  expect(output).toContain("imports src/slugify.ts: decide them together.");
  expect(output).toContain("Deciding again");
  expect(code).toBe(0);
  const workspace = output.match(/examples\/demo at (\S+)/)![1]!;
  expect(readFileSync(join(workspace, "src/slugify.ts"), "utf8")).toContain("maxLength");
  const tests = Bun.spawnSync([process.execPath, "test"], { cwd: workspace, env: { ...env, NO_COLOR: "1" } });
  expect(tests.exitCode).toBe(0);
});

describe("the demo leads somewhere", () => {
  test("without a terminal: the next three steps, the folder removed, the changeset in pencil log marked demo", async () => {
    const env = demoEnv();
    const result = await runCli(["demo"], { cwd: env.HOME!, env });
    expect(result.code).toBe(0);
    const workspace = result.stdout.match(/examples\/demo at (\S+)/)![1]!;
    expect(existsSync(dirname(workspace))).toBe(false);
    const steps = result.stdout.slice(result.stdout.indexOf("Next steps"));
    expect(steps).toContain("1. Set a model key in ~/.pencil/.env: GROQ_API_KEY=");
    expect(steps).toMatch(/2\. .*doctor/);
    expect(steps).toMatch(/3\. cd into your own repository and run .*agent "/);
    expect(result.stdout).toContain("The demo's temporary folder is removed");
    const log = await runCli(["log"], { cwd: env.HOME!, env });
    expect(log.stdout).toMatch(/discarded {2}\[demo\]/);
    expect(log.stdout).toContain("Add a maxLength option to slugify");
    expect(log.stdout).not.toContain("(session ");
    const json = JSON.parse((await runCli(["log", "--json"], { cwd: env.HOME!, env })).stdout);
    expect(json.map((r: { demo: boolean; workspace: string }) => [r.demo, r.workspace])).toEqual([[true, workspace]]);
  });

  test("--keep leaves the folder, and the changeset stays pending there", async () => {
    const env = demoEnv();
    const result = await runCli(["demo", "--keep"], { cwd: env.HOME!, env });
    const workspace = result.stdout.match(/examples\/demo at (\S+)/)![1]!;
    expect(existsSync(join(workspace, "src/slugify.ts"))).toBe(true);
    expect(result.stdout).toContain(`The demo's folder is kept: ${workspace}`);
    const json = JSON.parse((await runCli(["log", "--json"], { cwd: env.HOME!, env })).stdout);
    expect(json.map((r: { demo: boolean; status: string }) => [r.demo, r.status])).toEqual([[true, "pending"]]);
  });

  test("in a terminal: what was approved shows applied in pencil log, marked demo, and the folder goes", async () => {
    const env = demoEnv();
    const { code, output } = await runCliPty(["demo"], {
      cwd: env.HOME!,
      env,
      steps: [
        { expect: "[s]teps ", send: "a" },
        { expect: "[y/N]", send: "y" },
      ],
    });
    expect(code).toBe(0);
    const workspace = output.match(/examples\/demo at (\S+)/)![1]!;
    expect(existsSync(dirname(workspace))).toBe(false);
    expect(output).toContain("Next steps");
    const log = await runCli(["log"], { cwd: env.HOME!, env });
    expect(log.stdout).toMatch(/applied {2}\[demo\]/);
  });
});
