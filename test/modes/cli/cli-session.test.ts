import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { nobodyApprover } from "../../../core/policy/approver.ts";
import { ScriptedModel, type ScriptedTurn } from "../../../ai/scripted-model.ts";
import { savedScriptedRun, scriptedCreate } from "../../support/scripted-run.ts";
import { AgentRun } from "../../../app/agent-run.ts";
import { createRuntime } from "../../../app/runtime.ts";
import { join } from "node:path";
import { hangReply, textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { INDEX, runCli, runCliPty } from "../../support/cli.ts";
import { tempDir } from "../../support/temp.ts";
import { withTranspilerCache } from "../../support/transpiler-cache.ts";

// Sessions end to end: `bun index.ts` as a subprocess against the fake model server,
// follow-ups through a pseudo-terminal, continuations across processes, a kill -9.

async function setup() {
  const { workspace, groq, env } = await modelWorld();
  const cli = (args: string[]) => runCli([...args, "-w", workspace], { cwd: workspace, env });
  const log = async () =>
    JSON.parse((await cli(["log", "--json"])).stdout) as {
      id: string;
      time: string;
      status: string;
      session?: string;
      files: { path: string }[];
    }[];
  const earlier = (goal: string, turns: ScriptedTurn[]) => savedScriptedRun(env, workspace, goal, turns);
  return { workspace, groq, env, cli, log, earlier };
}

const create = (path: string, content: string) =>
  toolCallReply([{ name: "create_file", arguments: { path, content } }]);
const PROMPT = "[s]teps ";

describe("sessions you can talk to", () => {
  test("in a terminal, a follow-up at › is a new turn of the same session that sees the previous turns and the review", async () => {
    const { workspace, groq, env } = await setup();
    groq.enqueue(create("c.txt", "gamma\n"), textReply("Made c."), create("d.txt", "delta\n"), textReply("Made d."));
    const { code, output } = await runCliPty(["agent", "make c", "-w", workspace], {
      cwd: workspace,
      env,
      endFollowUps: false,
      steps: [
        { expect: PROMPT, send: "s\r" },
        { expect: "c.txt +1 -0 create", send: "" },
        { expect: PROMPT, send: "y\r" },
        { expect: "› ", send: "now make d as well\r" },
        { expect: PROMPT, send: "y\r" },
        { expect: "› ", send: "\r" },
      ],
    });
    expect(code).toBe(0);
    expect(readFileSync(join(workspace, "c.txt"), "utf8")).toBe("gamma\n");
    expect(readFileSync(join(workspace, "d.txt"), "utf8")).toBe("delta\n");
    const followUp = groq.requests[2]!.raw;
    expect(followUp).toContain("make c");
    expect(followUp).toContain("Made c.");
    expect(followUp).toContain("now make d as well");
    expect(followUp).toContain("Applied to disk: c.txt");
    expect(output).toContain("applied  d.txt");
  }, 30_000);

  test("-c after a restart continues the same conversation and the same pending changeset", async () => {
    const { groq, cli, log } = await setup();
    groq.enqueue(create("c.txt", "gamma\n"), textReply("Made c."));
    expect((await cli(["agent", "make c"])).code).toBe(3);
    const [first] = await log();
    groq.enqueue(create("d.txt", "delta\n"), textReply("Made d."));
    const second = await cli(["agent", "-c", "and d"]);
    expect(second.code).toBe(3);
    expect(second.stderr).toContain("Continuing");
    const rows = await log();
    expect(rows.length).toBe(1);
    expect(rows[0]!.id).toBe(first!.id);
    expect(rows[0]!.status).toBe("pending");
    expect(rows[0]!.files.map((f) => f.path)).toEqual(["c.txt", "d.txt"]);
    const request = groq.requests[2]!.raw;
    expect(request).toContain("make c");
    expect(request).toContain("Made c.");
    expect(request).toContain("and d");
    // Without -c, a new goal still continues the session whose changeset is pending, and says so.
    groq.enqueue(textReply("Nothing more."));
    const third = await cli(["agent", "anything else?"]);
    expect(third.stderr).toContain("is still pending, so this goal continues its session");
    expect(groq.requests[4]!.raw).toContain("and d");
    expect((await log()).length).toBe(1);
  }, 30_000);

  test("kill -9 during a run, then -c: the finished steps are kept, only the step in flight is lost", async () => {
    const { workspace, groq, env, cli, log } = await setup();
    groq.enqueue(create("c.txt", "gamma\n"), create("d.txt", "delta\n"), hangReply());
    const proc = Bun.spawn([process.execPath, INDEX, "agent", "make three files", "-w", workspace], {
      cwd: workspace,
      env: withTranspilerCache(env),
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    const deadline = Date.now() + 15_000;
    // The third request means the second step finished (and was saved before it was sent).
    while (groq.requests.length < 3 && Date.now() < deadline) await Bun.sleep(50);
    expect(groq.requests.length).toBe(3);
    proc.kill("SIGKILL");
    await proc.exited;
    expect(existsSync(join(workspace, "c.txt"))).toBe(false);
    groq.enqueue(textReply("Picking up: c and d are staged."));
    const again = await cli(["agent", "-c", "go on"]);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("interrupted");
    const rows = await log();
    expect(rows.length).toBe(1);
    expect(rows[0]!.files.map((f) => f.path)).toEqual(["c.txt", "d.txt"]);
    const request = groq.requests[3]!.raw;
    expect(request).toContain("make three files");
    expect(request).toContain("Staged create: d.txt");
    expect(request).toContain("go on");
  }, 30_000);

  test("ask -c continues the session's conversation with read-only tools", async () => {
    const { groq, cli, earlier } = await setup();
    const made = await earlier("make c", [scriptedCreate("c.txt", "gamma\n"), { text: "Made c." }]);
    expect(made.changeset?.status).toBe("pending");
    groq.enqueue(textReply("I created c.txt, still pending."));
    const asked = await cli(["ask", "-c", "what did you make?"]);
    expect(asked.code).toBe(0);
    expect(asked.stdout).toContain("I created c.txt");
    const request = groq.requests[0]!;
    expect(request.raw).toContain("make c");
    expect(request.raw).toContain("what did you make?");
    const tools = (request.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
    expect(tools).toContain("read_file");
    expect(tools).not.toContain("create_file");
  }, 30_000);

  test("Ctrl-C at a permission question stops the run like anywhere else in it: what was staged is kept for review", async () => {
    const { workspace, groq, env } = await setup();
    const outside = tempDir("pencil-outside-");
    writeFileSync(join(outside, "notes.txt"), "outside notes\n");
    groq.enqueue(
      create("c.txt", "gamma\n"),
      toolCallReply([{ name: "read_file", arguments: { path: join(outside, "notes.txt") } }]),
      textReply("never asked for"),
    );
    const { code, output } = await runCliPty(["agent", "make c then read notes", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: "[a]lways for this path", send: "\x03" },
        { expect: PROMPT, send: "y\r" },
      ],
    });
    expect(output).toContain("Stopping");
    expect(code).toBe(0);
    expect(readFileSync(join(workspace, "c.txt"), "utf8")).toBe("gamma\n");
    // The run stopped: the model was not called again after the question.
    expect(groq.requests.length).toBe(2);
    expect(groq.requests[1]!.raw).not.toContain("outside notes");
  }, 30_000);

  test("resuming tells the owner and the agent which staged files changed on disk since", async () => {
    const { workspace, groq, cli, earlier } = await setup();
    await earlier("shout a", [
      { toolCalls: [{ name: "read_file", input: { path: "a.txt" } }] },
      { toolCalls: [{ name: "edit_file", input: { path: "a.txt", old_string: "alpha", new_string: "ALPHA" } }] },
      { text: "Shouted." },
    ]);
    writeFileSync(join(workspace, "a.txt"), "alpha, edited by me\n");
    groq.enqueue(textReply("I will read it again."));
    const resumed = await cli(["agent", "-c", "go on"]);
    expect(resumed.stderr).toContain("Changed on disk since they were staged");
    expect(resumed.stderr).toContain("a.txt");
    expect(groq.requests[0]!.raw).toContain("changed on disk since you staged them");
  }, 30_000);

  test("--resume of an unknown id exits 2 and lists the known sessions", async () => {
    const { cli, earlier } = await setup();
    await earlier("say hello", [{ text: "Hello." }]);
    const result = await cli(["agent", "--resume", "nope", "again"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("No session nope");
    expect(result.stderr).toContain("say hello");
  }, 30_000);

  test("steps lists the checkpoints; rewind drops exactly the later files and turns, and the next turn continues from there", async () => {
    const { groq, cli, log, earlier } = await setup();
    await earlier("make files", [
      scriptedCreate("c.txt", "gamma\n"),
      scriptedCreate("d.txt", "delta\n"),
      scriptedCreate("e.txt", "epsilon\n"),
      { text: "Made three." },
    ]);
    const [before] = await log();
    const steps = await cli(["steps"]);
    expect(steps.code).toBe(0);
    expect(steps.stdout).toMatch(
      / 1 .*create_file.*\n\s+c\.txt \+1 -0 create\n\s+2 .*create_file.*\n\s+d\.txt.*\n\s+3 .*create_file.*\n\s+e\.txt/,
    );

    const bad = await cli(["rewind", "9"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("No checkpoint 9");

    const rewound = await cli(["rewind", "2"]);
    expect(rewound.code).toBe(0);
    const rows = await log();
    expect(rows.length).toBe(1);
    expect(rows[0]!.id).toBe(before!.id);
    expect(rows[0]!.files.map((f) => f.path)).toEqual(["c.txt", "d.txt"]);
    expect((await cli(["steps"])).stdout).not.toContain("e.txt");

    groq.enqueue(textReply("Back at two files."));
    expect((await cli(["agent", "-c", "where are we?"])).code).toBe(3);
    const request = groq.requests[0]!.raw;
    expect(request).toContain("Staged create: d.txt");
    expect(request).not.toContain("e.txt");
    expect(request).not.toContain("Made three.");
    expect(request).toContain("where are we?");
  }, 30_000);

  test("fork writes exactly checkpoint N's files into a new directory, never into the workspace, and leaves secrets behind", async () => {
    const { workspace, cli, earlier } = await setup();
    writeFileSync(join(workspace, ".env"), "TOKEN=secret\n");
    await earlier("make files", [
      scriptedCreate("c.txt", "gamma\n"),
      scriptedCreate("d.txt", "delta\n"),
      { text: "Made two." },
    ]);
    const target = join(tempDir("pencil-fork-"), "try");
    const forked = await cli(["fork", "1", target]);
    expect(forked.code).toBe(0);
    expect(readdirSync(target).sort()).toEqual(["a.txt", "c.txt"]);
    expect(readFileSync(join(target, "c.txt"), "utf8")).toBe("gamma\n");
    expect(existsSync(join(workspace, "c.txt"))).toBe(false);

    const again = await cli(["fork", "1", target]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("not empty");
    const inside = join(workspace, "sub");
    const refused = await cli(["fork", "1", inside]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("inside the workspace");
    expect(existsSync(inside)).toBe(false);
    expect((await cli(["fork", "1", workspace])).code).toBe(2);
  }, 30_000);

  test("review with several pending lists them newest first and picks one; discard removes one", async () => {
    const { workspace, groq, env, cli, log } = await setup();
    groq.enqueue(create("c.txt", "gamma\n"), textReply("Made c."));
    expect((await cli(["agent", "make c"])).code).toBe(3);
    // A second pending changeset from another session (as the phone could leave one).
    const runtime = createRuntime({ env, workspace });
    const model = new ScriptedModel([
      { toolCalls: [{ name: "create_file", input: { path: "d.txt", content: "delta\n" } }] },
      { text: "made d" },
    ]);
    await AgentRun.start(
      runtime,
      "agent",
      "make d",
      { approver: nobodyApprover, emit: () => {} },
      { models: { model, labels: [model.label], current: () => model.label, contextWindow: 100_000 } },
    );
    const [newest, older] = (await log()).sort((a, b) => (a.time < b.time ? 1 : -1));
    expect(older!.files.map((f) => f.path)).toEqual(["c.txt"]);
    const { code, output } = await runCliPty(["review", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: "Which one?", send: "2\r" },
        { expect: PROMPT, send: "y\r" },
      ],
    });
    expect(output.indexOf(newest!.id)).toBeLessThan(output.indexOf(older!.id));
    expect(code).toBe(0);
    expect(readFileSync(join(workspace, "c.txt"), "utf8")).toBe("gamma\n");
    expect(existsSync(join(workspace, "d.txt"))).toBe(false);

    const discarded = await cli(["discard", newest!.id]);
    expect(discarded.code).toBe(0);
    expect((await log()).find((r) => r.id === newest!.id)!.status).toBe("discarded");
    expect((await cli(["review"])).stdout).toContain("No pending changeset");
  }, 30_000);
});
