import { expect, test } from "bun:test";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { nobodyApprover } from "../../core/policy/approver.ts";
import { ScriptedModel, type ScriptedTurn } from "../../ai/scripted-model.ts";
import { AgentRun } from "../../app/agent-run.ts";
import { createRuntime } from "../../app/runtime.ts";
import { SavedSession } from "../../app/saved-session.ts";
import { SessionStore } from "../../app/session-store.ts";
import { tempDir, writeTree } from "../support/temp.ts";
import { SessionFileError } from "../../core/errors/session-file-error.ts";

function setup(files: Record<string, string> = { "a.txt": "alpha\n", "b.txt": "beta\n" }) {
  const workspace = tempDir();
  writeTree(workspace, files);
  const home = tempDir();
  const runtime = createRuntime({ env: { HOME: home, PENCIL_HOME: join(home, ".pencil") }, workspace });
  return { runtime, store: new SessionStore(runtime.pencilHome) };
}

function models(turns: ScriptedTurn[]) {
  const model = new ScriptedModel(turns, { name: "t" });
  return { model, models: { model, labels: [model.label], current: () => model.label, contextWindow: 100_000 } };
}

const hooks = { approver: nobodyApprover, emit: () => {} };

test("every step that staged something is a checkpoint with its tool, files and +/-; the log replays to the same overlay", async () => {
  const { runtime, store } = setup();
  const { models: m } = models([
    { toolCalls: [{ name: "read_file", input: { path: "a.txt" } }] },
    { toolCalls: [{ name: "edit_file", input: { path: "a.txt", old_string: "alpha", new_string: "ALPHA\nmore" } }] },
    { toolCalls: [{ name: "create_file", input: { path: "c.txt", content: "gamma\n" } }] },
    { text: "done" },
  ]);
  const run = await AgentRun.start(runtime, "agent", "shout", hooks, { models: m });
  const session = SavedSession.open(store, run.session!.id);
  const cps = session.checkpoints();
  expect(cps.map((c) => [c.n, c.tools, c.files])).toEqual([
    [1, ["edit_file"], [{ path: "a.txt", kind: "modify", added: 2, removed: 1 }]],
    [2, ["create_file"], [{ path: "c.txt", kind: "create", added: 1, removed: 0 }]],
  ]);
  const state = session.state();
  expect(state.messages.length).toBe(run.messages.length);
  const staged = session
    .stagedEntries(state)
    .map((e) => [e.real.split("/").pop(), new TextDecoder().decode(e.after!.bytes)]);
  expect(staged.sort()).toEqual([
    ["a.txt", "ALPHA\nmore\n"],
    ["c.txt", "gamma\n"],
  ]);
  // The changeset knows its session, and the header its changeset.
  expect(run.changeset!.session).toBe(session.id);
  expect(session.header.changeset).toBe(run.changeset!.id);
  expect(session.header.running).toBeUndefined();
  // Checkpoint 1: only a.txt, and the conversation up to that step.
  const at1 = session.state(1);
  expect([...at1.entries.keys()].map((k) => k.split("/").pop())).toEqual(["a.txt"]);
  expect(at1.messages.length).toBeLessThan(state.messages.length);
});

test("a torn last line (a crash mid-save) is dropped; a damaged line elsewhere or a newer format is a clear error, and nothing is overwritten", async () => {
  const { runtime, store } = setup();
  const { models: m } = models([
    { toolCalls: [{ name: "create_file", input: { path: "c.txt", content: "gamma\n" } }] },
    { toolCalls: [{ name: "create_file", input: { path: "d.txt", content: "delta\n" } }] },
    { text: "done" },
  ]);
  const run = await AgentRun.start(runtime, "agent", "make files", hooks, { models: m });
  const id = run.session!.id;
  const logFile = join(store.pathOf(id), "log.jsonl");
  appendFileSync(logFile, '{"t":"step","at":"x","messa');
  const reopened = SavedSession.open(store, id);
  expect(reopened.checkpoints().length).toBe(2);

  const good = readFileSync(logFile, "utf8");
  const lines = good.split("\n");
  lines[1] = "{not json";
  writeFileSync(logFile, lines.join("\n"));
  expect(() => SavedSession.open(store, id)).toThrow(SessionFileError);
  expect(() => SavedSession.open(store, id)).toThrow(/line 2 is damaged/);
  expect(readFileSync(logFile, "utf8")).toBe(lines.join("\n"));

  const headerFile = join(store.pathOf(id), "session.json");
  writeFileSync(logFile, good);
  const header = JSON.parse(readFileSync(headerFile, "utf8"));
  writeFileSync(headerFile, JSON.stringify({ ...header, format: 99 }));
  expect(() => AgentRun.continueSession(runtime, id)).toThrow(/newer Pencil/);
  // The changeset itself is still there to review.
  expect(runtime.store.load(run.changeset!.id).files.length).toBe(2);
});

test("a message that is not a model message is refused on load, naming the session", async () => {
  const { runtime, store } = setup();
  const { models: m } = models([{ text: "hello" }]);
  const run = await AgentRun.start(runtime, "ask", "hi", hooks, { models: m });
  const id = run.session!.id;
  const logFile = join(store.pathOf(id), "log.jsonl");
  const good = readFileSync(logFile, "utf8");
  appendFileSync(logFile, `${JSON.stringify({ t: "turn", at: "now", messages: [{ role: "wizard", content: 3 }] })}\n`);
  expect(() => AgentRun.continueSession(runtime, id)).toThrow(/not a valid model message/);
  // A message changed inside the part a finished run left (its digest no longer matches) is checked too.
  writeFileSync(logFile, good.replace('"role":"user"', '"role":"wizard"'));
  expect(() => AgentRun.continueSession(runtime, id)).toThrow(/message 0 is not a valid model message/);
  writeFileSync(logFile, good);
  expect(AgentRun.continueSession(runtime, id).messages.length).toBe(run.messages.length);
});

test("a follow-up continues the conversation and the pending changeset under the same id", async () => {
  const { runtime } = setup();
  const { model, models: m } = models([
    { toolCalls: [{ name: "create_file", input: { path: "c.txt", content: "gamma\n" } }] },
    { text: "made c" },
    { toolCalls: [{ name: "create_file", input: { path: "d.txt", content: "delta\n" } }] },
    { text: "made d" },
  ]);
  const run = await AgentRun.start(runtime, "agent", "make c", hooks, { models: m });
  const first = run.changeset!.id;
  const again = AgentRun.continueSession(runtime, run.session!.id, { models: m });
  await again.followUp("now make d too", hooks);
  expect(again.changeset!.id).toBe(first);
  expect(again.changeset!.files.map((f) => f.path)).toEqual(["c.txt", "d.txt"]);
  const prompt = JSON.stringify(model.prompts[2]);
  expect(prompt).toContain("make c");
  expect(prompt).toContain("made c");
  expect(prompt).toContain("now make d too");
  expect(prompt).toContain("still pending");
});

test("a long session near the window compacts older turns but keeps the goal, every rejection reason and the staged list", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 14; i++) files[`f${i}.txt`] = `line of file ${i}\n`.repeat(60);
  const { runtime } = setup(files);
  const reads: ScriptedTurn[] = Array.from({ length: 14 }, (_, i) => ({
    toolCalls: [{ name: "read_file", input: { path: `f${i}.txt` } }],
  }));
  const model = new ScriptedModel([
    { toolCalls: [{ name: "create_file", input: { path: "c.txt", content: "  spaced\n" } }] },
    { text: "made c" },
    ...reads,
    { text: "read everything again" },
  ]);
  const m = { model, labels: [model.label], current: () => model.label, contextWindow: 2500 };
  const run = await AgentRun.start(runtime, "agent", "make c and then study the files", hooks, { models: m });
  await run.revise([{ path: "c.txt", reason: "use tabs, never spaces" }], hooks);
  const last = JSON.stringify(model.prompts.at(-1));
  expect(last).toContain("[compacted:");
  expect(last).toContain("Session memory");
  expect(last).toContain("make c and then study the files");
  expect(last).toContain("use tabs, never spaces");
  expect(model.prompts.at(-1)!.length).toBeLessThan(run.messages.length);
  // The saved conversation is whole: compaction only shapes what the model is sent.
  expect(SavedSession.open(new SessionStore(runtime.pencilHome), run.session!.id).state().messages.length).toBe(
    run.messages.length,
  );
});

test("a run's commands in the header are checked as the changeset checks them: a whole record reads back, a damaged one is refused", () => {
  const home = tempDir();
  const store = new SessionStore(join(home, ".pencil"));
  const header = store.create({ id: "s-commands", workspace: home, mode: "agent", goal: "g" });
  const command = {
    command: "bun test",
    at: "2026-12-01T00:00:00.000Z",
    outcome: "exited" as const,
    exitCode: 0,
    durationMs: 1200,
    sandbox: "namespace" as const,
    staged: [{ path: "a.txt", change: "edit" as const }],
    notStaged: 0,
    network: "proxy" as const,
    connections: [{ method: "GET", host: "registry.npmjs.org", port: 443, allowed: true }],
  };
  const run = { goal: "g", mode: "agent", startedAt: command.at, endedAt: command.at, changeset: null };
  store.writeHeader({ ...header, runs: [{ ...run, commands: [command] }] });
  expect(store.header("s-commands").runs?.[0]?.commands).toEqual([command]);
  store.writeHeader({ ...header, runs: [{ ...run, commands: [{ ...command, outcome: "vanished" as "exited" }] }] });
  expect(() => store.header("s-commands")).toThrow(SessionFileError);
});

test("a changeset reopened for review takes its conversation from its session; the one saved beside it is read only without a session", async () => {
  const { runtime, store } = setup();
  const { models: m } = models([
    { toolCalls: [{ name: "create_file", input: { path: "c.txt", content: "gamma\n" } }] },
    { text: "made c" },
  ]);
  const run = await AgentRun.start(runtime, "agent", "make c", hooks, { models: m });
  const cs = run.changeset!;
  const conversation = join(runtime.store.dir, `${cs.id}.conversation.json`);
  writeFileSync(conversation, "{damaged");
  // With its session readable, the damaged file beside the changeset is never read.
  const resumed = AgentRun.resume(runtime, cs);
  expect(resumed.session?.id).toBe(run.session!.id);
  expect(resumed.messages).toEqual(
    SavedSession.open(store, run.session!.id).state().messages as typeof resumed.messages,
  );
  expect(resumed.overlay.list().map((e) => e.real)).toEqual(run.overlay.list().map((e) => e.real));
  // Without one, the conversation saved with the changeset is what the run goes on from.
  const alone = { ...cs, session: undefined };
  writeFileSync(conversation, JSON.stringify([{ role: "user", content: "make c, from the file" }]));
  expect(AgentRun.resume(runtime, alone).messages).toEqual([{ role: "user", content: "make c, from the file" }]);
  expect(AgentRun.resume(runtime, alone).session).toBeNull();
});

test("what a changeset revises follows from the run: a revision and a follow-up after a decided one revise it, more work on a pending one keeps its id and what it revised", async () => {
  const { runtime } = setup();
  const { models: m } = models([
    { toolCalls: [{ name: "create_file", input: { path: "c.txt", content: "gamma\n" } }] },
    { text: "made c" },
    { toolCalls: [{ name: "create_file", input: { path: "d.txt", content: "delta\n" } }] },
    { text: "made d" },
    { toolCalls: [{ name: "create_file", input: { path: "e.txt", content: "eps\n" } }] },
    { text: "made e" },
    { toolCalls: [{ name: "create_file", input: { path: "f.txt", content: "phi\n" } }] },
    { text: "made f" },
  ]);
  const run = await AgentRun.start(runtime, "agent", "make c", hooks, { models: m });
  const first = run.changeset!;
  expect(first.revises).toBeUndefined();
  await run.revise([{ path: "c.txt", reason: "call it d" }], hooks);
  const second = run.changeset!;
  expect([second.id === first.id, second.revises]).toEqual([false, first.id]);
  await run.followUp("and e", hooks); // still pending: the same changeset grows, revising what it revised
  expect([run.changeset!.id, run.changeset!.revises]).toEqual([second.id, first.id]);
  runtime.store.save({
    ...runtime.store.load(second.id),
    status: "rejected",
    decisions: { "d.txt": "rejected", "e.txt": "rejected" },
  });
  await run.followUp("then f", hooks); // decided elsewhere: a changeset of its own, revising the decided one
  expect([run.changeset!.id === second.id, run.changeset!.revises]).toEqual([false, second.id]);
});
