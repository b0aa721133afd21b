// Harness overhead: a scripted run of 100 tool calls against the local model server
// (the real Groq client over HTTP, the real session, policy seam and tools), target
// ≤ 2 s wall in total. Baseline in the same run: the same 100 calls played by the
// in-process scripted model (no HTTP, no provider parsing).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nobodyApprover } from "../core/policy/approver.ts";
import { ScriptedModel } from "../ai/scripted-model.ts";
import { AgentRun } from "../app/agent-run.ts";
import { chooseModels } from "../app/model-choice.ts";
import { createRuntime } from "../app/runtime.ts";
import { startFakeOpenAIServer, textReply, toolCallReply } from "../test/support/fake-openai-server.ts";
import { median, ms, target } from "./stats.ts";

const CALLS = 100;
const RUNS = 5;
const workspace = mkdtempSync(join(tmpdir(), "pencil-harness-bench-"));
// One file a call: the run stops a model that repeats a call with the same result (a loop), so no read repeats.
for (let i = 0; i < CALLS; i++) writeFileSync(join(workspace, `f${i}.txt`), `file ${i}\n`.repeat(20));
const home = mkdtempSync(join(tmpdir(), "pencil-harness-home-"));
const server = await startFakeOpenAIServer();
const env = {
  HOME: home,
  PENCIL_HOME: join(home, ".pencil"),
  GROQ_API_KEY: "gsk_bench",
  GROQ_BASE_URL: `${server.url}/openai/v1`,
};
const hooks = { approver: nobodyApprover, emit: () => {} };

async function overHttp(): Promise<number> {
  for (let i = 0; i < CALLS; i++)
    server.enqueue(toolCallReply([{ name: "read_file", arguments: { path: `f${i}.txt` } }]));
  server.enqueue(textReply("done"));
  const runtime = createRuntime({ env, workspace });
  const t0 = performance.now();
  const run = await AgentRun.start(runtime, "agent", "read files", hooks, {
    models: chooseModels(runtime, { emit: () => {} }),
    maxSteps: CALLS + 5,
  });
  const elapsed = performance.now() - t0;
  if (run.outcome?.toolCalls !== CALLS)
    throw new Error(`expected ${CALLS} calls, got ${run.outcome?.toolCalls}: ${run.outcome?.error}`);
  return elapsed;
}

async function inProcess(): Promise<number> {
  const turns = [
    ...Array.from({ length: CALLS }, (_, i) => ({
      toolCalls: [{ name: "read_file", input: { path: `f${i}.txt` } }],
    })),
    { text: "done" },
  ];
  const model = new ScriptedModel(turns, { name: "bench" });
  const runtime = createRuntime({ env, workspace });
  const t0 = performance.now();
  const run = await AgentRun.start(runtime, "agent", "read files", hooks, {
    models: { model, labels: [model.label], current: () => model.label, contextWindow: 1_000_000 },
    maxSteps: CALLS + 5,
  });
  const elapsed = performance.now() - t0;
  if (run.outcome?.toolCalls !== CALLS) throw new Error(`expected ${CALLS} calls, got ${run.outcome?.toolCalls}`);
  return elapsed;
}

await overHttp(); // warm up
const http: number[] = [];
const local: number[] = [];
for (let i = 0; i < RUNS; i++) {
  http.push(await overHttp());
  local.push(await inProcess());
}
await server.stop();
rmSync(workspace, { recursive: true, force: true });
rmSync(home, { recursive: true, force: true });
const h = median(http);
const l = median(local);
console.log(
  `harness: ${CALLS} tool calls over HTTP (Groq client → local server): median ${ms(h)} (${ms(h / CALLS)} per call)`,
);
console.log(
  `baseline: the same run with the in-process scripted model: median ${ms(l)}; HTTP and provider parsing add ${(h / l).toFixed(2)}×`,
);
target({
  name: "100 tool calls against the local model server",
  value: h,
  unit: "ms",
  max: 2000,
  baseline: { name: "in-process scripted model", value: l },
});
