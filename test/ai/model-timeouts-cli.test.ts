import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "../support/fake-openai-server.ts";
import { plain, runCli } from "../support/cli.ts";
import { tempDir, writeTree } from "../support/temp.ts";

// End to end: the timeout variables reach the model calls of a real `pencil ask`
// against a local server that stops answering mid-step.

let local: FakeOpenAIServer;
beforeAll(async () => {
  local = await startFakeOpenAIServer();
});
afterAll(async () => {
  await local.stop();
});

function setup(extra: Record<string, string>) {
  const workspace = tempDir("pencil-timeout-ws-");
  writeTree(workspace, { "a.txt": "alpha\n" });
  const home = tempDir("pencil-timeout-home-");
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    PENCIL_HOME: join(home, ".pencil"),
    LOCAL_LLM_BASE_URL: `${local.url}/v1`,
    LOCAL_LLM_MODEL: "stalling-model",
    NO_COLOR: "1",
    ...extra,
  };
  return { workspace, env };
}

test("a local server that stalls mid-answer: pencil ask stops after PENCIL_TIMEOUT_IDLE_MS and says why (exit 1)", async () => {
  const { workspace, env } = setup({ PENCIL_TIMEOUT_IDLE_MS: "400" });
  local.enqueue({
    kind: "reply",
    text: "Let me think about alpha for a very long while.",
    fail: { afterEvents: 3, mode: "stall" },
  });
  const result = await runCli(["ask", "what is in a.txt?", "-w", workspace], {
    cwd: workspace,
    env,
    timeoutMs: 25_000,
  });
  expect(result.code).toBe(1);
  expect(plain(result.stderr + result.stdout)).toContain("local:stalling-model sent nothing for 400 ms");
});

test("a timeout variable that is not a number of milliseconds is a configuration error (exit 2) naming it", async () => {
  const { workspace, env } = setup({ PENCIL_TIMEOUT_FIRST_BYTE_MS: "soon" });
  const result = await runCli(["ask", "what is in a.txt?", "-w", workspace], { cwd: workspace, env });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("PENCIL_TIMEOUT_FIRST_BYTE_MS=soon is not a number of milliseconds");
});
