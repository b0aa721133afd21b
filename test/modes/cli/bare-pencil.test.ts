import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, runCliPty } from "../../support/cli.ts";
import { baseEnv, modelWorld } from "../../support/cli-world.ts";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";

// Bare `pencil`: a session in a terminal (as claude, codex and aider open theirs), the help anywhere else.

const BANNER = "|  _ \\";
const GOAL = "What should Pencil do? ";

describe("bare pencil", () => {
  test("not in a terminal it prints the help and exits 0", async () => {
    const env = baseEnv();
    const bare = await runCli([], { cwd: env.HOME!, env });
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain("Usage: pencil <command> [options]");
    expect(bare.stdout).not.toContain(BANNER);
    // With options but no command, the same.
    const withWorkspace = await runCli(["-w", env.HOME!], { cwd: env.HOME!, env });
    expect(withWorkspace.code).toBe(0);
    expect(withWorkspace.stdout).toContain("Usage: pencil <command> [options]");
  });

  test("help and -h print the help in a terminal too", async () => {
    const env = baseEnv();
    for (const args of [["help"], ["-h"]]) {
      const { code, output } = await runCliPty(args, { cwd: env.HOME!, env, steps: [] });
      expect(code).toBe(0);
      expect(output).toContain("Usage: pencil <command> [options]");
      expect(output).not.toContain(BANNER);
    }
  });

  test("in a terminal with no model it says so before any goal prompt and offers the demo", async () => {
    const env = baseEnv();
    const { code, output } = await runCliPty([], {
      cwd: env.HOME!,
      env,
      steps: [{ expect: "[x] exit: ", send: "x" }],
    });
    expect(code).toBe(0);
    expect(output).toContain(BANNER);
    expect(output).toContain("No model is configured yet.");
    expect(output).toContain("GROQ_API_KEY");
    expect(output).toContain("[d] run the demo");
    expect(output).not.toContain(GOAL);
  });

  test("in a terminal with no model, d runs the demo", async () => {
    const env = baseEnv();
    env.TMPDIR = env.HOME!; // the demo's copy goes under the test's own home
    const { code, output } = await runCliPty([], {
      cwd: env.HOME!,
      env,
      steps: [
        { expect: "[x] exit: ", send: "d" },
        { expect: "[s]teps ", send: "q" },
      ],
    });
    expect(output).toContain("Pencil demo");
    expect(output).toContain("read .env denied");
    expect(code).toBe(0);
  });

  test("in a terminal with a model: the banner, the goal, the run, its review, a follow-up", async () => {
    const { workspace, groq, env } = await modelWorld();
    groq.enqueue(
      toolCallReply([{ id: "c1", name: "create_file", arguments: { path: "c.txt", content: "gamma\n" } }]),
      textReply("Created c.txt."),
    );
    const { code, output } = await runCliPty(["-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: GOAL, send: "make c\r" },
        { expect: "[s]teps ", send: "y" },
      ],
    });
    expect(output.indexOf(BANNER)).toBeLessThan(output.indexOf(GOAL));
    expect(output).not.toContain("No model is configured");
    expect(output).toContain("Follow up in this session");
    expect(code).toBe(0);
    expect(readFileSync(join(workspace, "c.txt"), "utf8")).toBe("gamma\n");
    expect(JSON.stringify(groq.requests[0]!.body)).toContain("make c");
  });
});
