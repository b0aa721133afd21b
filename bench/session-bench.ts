// Sessions (issue 9). (1) Saving a session after one step when it already holds 200
// messages and 100 staged files: target ≤ 10 ms median, and incremental. Baseline in
// the same run: rewriting everything (all messages and all staged contents) atomically,
// which is what a non-incremental save would do. (2) `agent -c` from process start to
// the first model request with a 200-message session: target ≤ 150 ms. Baselines in the
// same run: a fresh `agent "goal"` with no session, and a bare `bun -e ""`.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime } from "../app/runtime.ts";
import { SavedSession } from "../app/saved-session.ts";
import { SessionStore } from "../app/session-store.ts";
import { DiskFileOps, writeFileAtomic } from "../core/file-ops.ts";
import { Overlay } from "../core/staging/overlay.ts";
import { INDEX } from "../test/support/cli.ts";
import { startFakeOpenAIServer, textReply } from "../test/support/fake-openai-server.ts";
import { median, ms, target, untilFirstRequest } from "./stats.ts";

const MESSAGES = 200;
const FILES = 100;
const RUNS = 60;
const STARTS = 9;

const workspace = mkdtempSync(join(tmpdir(), "pencil-session-bench-"));
for (let i = 0; i < FILES; i++) writeFileSync(join(workspace, `f${i}.ts`), `export const v${i} = ${i};\n`.repeat(40));
const home = mkdtempSync(join(tmpdir(), "pencil-session-home-"));
const env = { HOME: home, PENCIL_HOME: join(home, ".pencil") };
const runtime = createRuntime({ env, workspace });
const store = new SessionStore(runtime.pencilHome);

/** A realistic conversation: the goal, then read_file calls and their results. */
function conversation(n: number): unknown[] {
  const out: unknown[] = [{ role: "user", content: "refactor every module to use the shared logger" }];
  for (let i = 0; out.length < n - 2; i++) {
    out.push({
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: `call_${i}`, toolName: "read_file", input: { path: `f${i % FILES}.ts` } },
      ],
    });
    out.push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `call_${i}`,
          toolName: "read_file",
          output: { type: "text", value: `1\texport const v${i} = ${i};\n`.repeat(40) },
        },
      ],
    });
  }
  while (out.length < n) out.push({ role: "assistant", content: "Read them; now editing." });
  return out;
}

const origin = (i: number) => ({
  tool: "edit_file",
  callId: `call_${i}`,
  model: "bench",
  readsBefore: [`f${i % FILES}.ts`],
});

// (1) A session with 200 messages and 100 staged files, then one more step at a time.
const session = SavedSession.create(store, { workspace: runtime.ws.root, mode: "agent", goal: "bench" });
const overlay = new Overlay(new DiskFileOps());
for (let i = 0; i < FILES; i++)
  overlay.writeBytes(
    join(runtime.ws.root, `f${i}.ts`),
    new TextEncoder().encode(`export const v${i} = ${i} + 1;\n`.repeat(40)),
    { origin: origin(i) },
  );
// Each measured step adds 2 messages: starting at 200 − RUNS, the median step saves a 200-message session.
const messages = conversation(MESSAGES - RUNS);
session.saveStep(messages, overlay, runtime.ws, "bench");

const incremental: number[] = [];
const rewrite: number[] = [];
for (let k = 0; k < RUNS; k++) {
  const i = k % FILES;
  overlay.writeBytes(
    join(runtime.ws.root, `f${i}.ts`),
    new TextEncoder().encode(`export const v${i} = ${i} + ${k + 2};\n`.repeat(40)),
    { origin: origin(i) },
  );
  messages.push(
    {
      role: "assistant",
      content: [
        {
          type: "tool-call",
          toolCallId: `edit_${k}`,
          toolName: "edit_file",
          input: { path: `f${i}.ts`, old_string: "1", new_string: "2" },
        },
      ],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `edit_${k}`,
          toolName: "edit_file",
          output: { type: "text", value: `Staged edit: f${i}.ts` },
        },
      ],
    },
  );
  const t0 = performance.now();
  session.saveStep(messages, overlay, runtime.ws, "bench");
  incremental.push(performance.now() - t0);

  // What a save that rewrites everything costs: every message and every staged content, atomically.
  const t1 = performance.now();
  const all = JSON.stringify({
    messages,
    files: overlay.list().map((e) => ({
      real: e.real,
      base: e.base,
      origins: e.origins,
      bytes: Buffer.from(e.after!.bytes).toString("base64"),
    })),
  });
  writeFileAtomic(join(home, "rewrite.json"), new TextEncoder().encode(all), 0o600);
  rewrite.push(performance.now() - t1);
}
const saveMedian = median(incremental);
console.log(
  `save after a step (${MESSAGES - RUNS}→${messages.length} messages, ${MESSAGES} at the median; ${overlay.list().length} staged files): median ${ms(saveMedian)}`,
);
console.log(`  baseline, rewriting everything each step: median ${ms(median(rewrite))}`);
target({
  name: "save a session after a step (200 messages, 100 staged files)",
  value: saveMedian,
  unit: "ms",
  max: 10,
  baseline: { name: "rewriting everything", value: median(rewrite) },
});

// (2) `agent -c` with a 200-message session, from spawn to the first model request.
const server = await startFakeOpenAIServer();
const cliEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  PENCIL_HOME: join(home, ".pencil"),
  GROQ_API_KEY: "gsk_bench",
  GROQ_BASE_URL: `${server.url}/openai/v1`,
  NO_COLOR: "1",
};
const resumed = SavedSession.create(store, { workspace: runtime.ws.root, mode: "agent", goal: "bench -c" });
resumed.saveTurn(conversation(MESSAGES));
// As a finished run leaves it: the log's digest recorded in the header.
resumed.finishRun(null);
const fresh = mkdtempSync(join(tmpdir(), "pencil-session-fresh-"));

const firstRequest = (args: string[], cwd: string) =>
  untilFirstRequest([process.execPath, INDEX, ...args], {
    cwd,
    env: cliEnv,
    requests: () => server.requests.length,
    enqueue: () => server.enqueue(textReply("ok")),
  });

const continued: number[] = [];
const freshStart: number[] = [];
const bare: number[] = [];
for (let k = 0; k < STARTS; k++) {
  continued.push(await firstRequest(["agent", "--resume", resumed.id, "go on", "-w", workspace], workspace));
  freshStart.push(await firstRequest(["agent", "say ok", "-w", fresh], fresh));
  const t0 = performance.now();
  Bun.spawnSync([process.execPath, "-e", ""]);
  bare.push(performance.now() - t0);
}
const lastRequest = JSON.stringify(server.requests.at(-2)?.body?.messages?.length ?? 0);
const startMedian = median(continued);
console.log(
  `agent --resume with a ${MESSAGES}-message session, start → first model request: median ${ms(startMedian)} (request carried ${lastRequest} messages)`,
);
console.log(`  baseline, agent with no session: median ${ms(median(freshStart))}; bare bun -e "": ${ms(median(bare))}`);
target({
  name: "agent --resume, 200-message session, start → first model request",
  value: startMedian,
  unit: "ms",
  max: 150,
  baseline: { name: "agent with no session", value: median(freshStart) },
});

await server.stop();
for (const dir of [workspace, home, fresh]) rmSync(dir, { recursive: true, force: true });
