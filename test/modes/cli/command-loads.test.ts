import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { runCli } from "../../support/cli.ts";
import { tempDir } from "../../support/temp.ts";

// A command loads what it uses and no more: the AI SDK with its providers and the tools are half of an agent's start,
// highlight.js as much again for a review, and a command that needs none of them would pay it on every run.

const PRELOAD = join(import.meta.dir, "../../fixtures/loaded-modules-preload.ts");
const ROOT = join(import.meta.dir, "../../..");

/** A module test: a library (its package's folder below any node_modules), or one of Pencil's files. */
const library = (name: string) => (path: string) => path.includes(`/node_modules/${name}/`);
const own = (file: string) => (path: string) => path === join(ROOT, file);

/** The modules (absolute paths) `pencil ARGS` loaded in the workspace. */
async function loadedBy(args: string[], world: { workspace: string; env: Record<string, string> }): Promise<string[]> {
  const file = join(tempDir("pencil-loads-"), "modules.txt");
  const result = await runCli([...args, "-w", world.workspace], {
    cwd: world.workspace,
    env: { ...world.env, PENCIL_TEST_LOADED_MODULES: file },
    preload: PRELOAD,
  });
  // The command ran as it does for a person: no failure of its own start.
  expect(result.stderr).not.toContain("error: ");
  const loaded = readFileSync(file, "utf8").split("\n").filter(Boolean);
  expect(loaded).toContain(join(ROOT, "index.ts"));
  return loaded;
}

/** The agent's stack: the AI SDK, its providers, and the run. */
const AGENT_STACK = [
  library("ai"),
  library("@ai-sdk/provider-utils"),
  library("@openrouter/ai-sdk-provider"),
  own("app/agent-run.ts"),
];

describe("what a command loads", () => {
  test("steps, log and a review (no terminal, --patch) load neither the agent's stack nor highlight.js", async () => {
    const world = await modelWorld();
    world.groq.enqueue(
      toolCallReply([{ name: "create_file", arguments: { path: "c.txt", content: "gamma\n" } }]),
      textReply("Made c."),
    );
    const run = await runCli(["agent", "make c", "-w", world.workspace], { cwd: world.workspace, env: world.env });
    expect(run.code).toBe(3);
    for (const args of [["steps"], ["log"], ["review"], ["review", "--patch"]]) {
      const loaded = await loadedBy(args, world);
      const heavy = loaded.filter((path) => [...AGENT_STACK, library("highlight.js")].some((is) => is(path)));
      expect({ args, heavy }).toEqual({ args, heavy: [] });
    }
  }, 30_000);

  test("an agent run with Groq alone loads Groq's client, not OpenRouter's nor the OpenAI-compatible one, nor the command proxies", async () => {
    const world = await modelWorld();
    world.groq.enqueue(
      toolCallReply([{ name: "create_file", arguments: { path: "c.txt", content: "gamma\n" } }]),
      textReply("Made c."),
    );
    const loaded = await loadedBy(["agent", "make c"], world);
    expect(loaded.some(library("@ai-sdk/groq"))).toBe(true);
    const unused = [
      library("@openrouter/ai-sdk-provider"),
      library("@ai-sdk/openai-compatible"),
      own("net/command-proxy.ts"),
      own("core/sandbox/refusing-proxy.ts"),
    ];
    expect(loaded.filter((path) => unused.some((is) => is(path)))).toEqual([]);
  }, 30_000);
});
