import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { nobodyApprover } from "../../core/policy/approver.ts";
import type { SessionEvent } from "../../agent/events.ts";
import { AgentRun } from "../../app/agent-run.ts";
import { chooseModels } from "../../app/model-choice.ts";
import { createRuntime } from "../../app/runtime.ts";
import { FINISH_MODES, type FinishResult, replayFinish } from "../../bench/finish-modes.ts";
import { FIXTURE } from "../../bench/recovery-modes.ts";
import { sandboxAvailable } from "../../core/sandbox/namespace.ts";
import {
  errorReply,
  type FakeOpenAIServer,
  type FakeReply,
  startFakeOpenAIServer,
  textReply,
} from "../support/fake-openai-server.ts";
import { formatSummary } from "../../render/summary.ts";
import { tempDir } from "../support/temp.ts";

// Every mode of bench/finish-modes.ts through the real loop over the provider's
// HTTP protocol (Groq client → local server → session → seam → tools → overlay).
const results = new Map<string, FinishResult>();
const ready = replayFinish(join(import.meta.dir, "..", "..")).then((all) => all.forEach((r) => results.set(r.id, r)));

describe("a run finishes: each way a small model ends a turn badly ends with the right file or an answer it can act on", () => {
  for (const mode of FINISH_MODES) {
    test(`${mode.item}: ${mode.what}`, async () => {
      await ready;
      const r = results.get(mode.id)!;
      expect(r.verdict).not.toBe("wrong");
      expect(r.verdict).not.toBe("generic");
      // What is staged is what the mode expects, exactly (null: absent).
      for (const [path, content] of Object.entries(mode.expect ?? {})) expect(r.files[path]).toBe(content);
      if (mode.goal === "file") expect(r.verdict).toBe("correct");
      else for (const needle of mode.needles) expect(r.answer).toContain(needle);
    });
  }

  test("a repaired content says so in its answer (the review's diff shows the rest)", async () => {
    await ready;
    const says: Record<string, RegExp> = {
      "content-fenced-write": /fence, which was removed/,
      "content-html-entities": /HTML entities/,
      "content-makefile-spaces": /start with a tab/,
      "content-diff-as-write": /unified diff; it was applied/,
      "content-apply-patch-as-write": /apply_patch body; it was applied/,
      "content-final-newline": /final newline was kept/,
    };
    for (const [id, pattern] of Object.entries(says)) {
      const answers = results.get(id)!.answers.join("\n");
      expect(`${id}: ${answers}`).toMatch(pattern);
    }
  });

  test("a call cut by the output-token limit is told the size it was cut at and to send a smaller change", async () => {
    await ready;
    expect(results.get("end-length-mid-call")!.answer).toMatch(/cut off at [\d,]+ characters.*Send a smaller change/s);
  });

  test("an edits list refused whole stages nothing, not even its first edit", async () => {
    await ready;
    expect(results.get("shape-edits-one-fails")!.files["src/tax.ts"]).toBe(FIXTURE["src/tax.ts"]!);
  });
});

describe("the end of a turn, neighbours", () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAIServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  async function play(
    mode: "agent" | "ask" | "plan",
    replies: FakeReply[],
    options: {
      files?: Record<string, string>;
      settings?: unknown;
      maxSteps?: number;
      env?: Record<string, string>;
    } = {},
  ) {
    server.clear();
    const workspace = tempDir();
    const home = tempDir();
    for (const [path, content] of Object.entries({ ...FIXTURE, ...options.files })) {
      mkdirSync(dirname(join(workspace, path)), { recursive: true });
      writeFileSync(join(workspace, path), content);
    }
    if (options.settings) {
      mkdirSync(join(home, ".pencil"), { recursive: true });
      writeFileSync(join(home, ".pencil", "settings.json"), JSON.stringify(options.settings));
    }
    const env = {
      HOME: home,
      PENCIL_HOME: join(home, ".pencil"),
      GROQ_API_KEY: "gsk_test",
      GROQ_BASE_URL: `${server.url}/openai/v1`,
      ...options.env,
    };
    server.enqueue(...replies);
    const runtime = createRuntime({ env, workspace });
    const events: SessionEvent[] = [];
    const run = await AgentRun.start(
      runtime,
      mode,
      "Fix the shop",
      { approver: nobodyApprover, emit: (e) => events.push(e) },
      { models: chooseModels(runtime, { emit: () => {} }), maxSteps: options.maxSteps ?? 20 },
    );
    const staged = run.overlay.list().map((e) => e.real.slice(runtime.ws.root.length + 1));
    const notices = events.flatMap((e) => (e.type === "notice" ? [e.message] : []));
    return { run, staged, notices, events, requests: server.requests.length };
  }

  test("a content repair is stated in the changeset's summary", async () => {
    const { run } = await play("agent", [
      {
        kind: "reply",
        toolCalls: [
          { name: "create_file", arguments: { path: "src/r.ts", content: "```ts\nexport const R = 1;\n```" } },
        ],
      },
      textReply("Stopping here."),
    ]);
    expect(formatSummary(run.changeset!, { color: false })).toContain(
      "repaired: the content was wrapped in one ```ts fence",
    );
  });

  test("a <think> block is reasoning: the answer is the text after it, the thinking is reported as such", async () => {
    const { run, events } = await play("ask", [
      textReply("<think>The user asks about the rate; it is 0.10.</think>The rate is 0.10."),
    ]);
    expect(run.outcome!.text).toBe("The rate is 0.10.");
    expect(run.outcome!.reasoning).toContain("it is 0.10");
    expect(events.some((e) => e.type === "thinking")).toBe(true);
    const answer = events.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join("");
    expect(answer).toBe("The rate is 0.10.");
  });

  test("'Done.' in an ask run is not questioned; an agent's empty reply is nudged once, not twice", async () => {
    const ask = await play("ask", [textReply("Done.")]);
    expect(ask.requests).toBe(1);
    const agent = await play("agent", [textReply(""), textReply(""), textReply("unused")]);
    expect(agent.requests).toBe(2);
    expect(agent.notices.filter((n) => /empty/.test(n)).length).toBe(1);
  });

  test("a plan submitted as text is taken, and ends the run as a native submit_plan does", async () => {
    const plan = {
      summary: "Raise the rate.",
      steps: [
        { id: "s1", title: "Change the rate", detail: "Set TAX_RATE to 0.2 in src/tax.ts.", files: ["src/tax.ts"] },
      ],
      risks: [],
      questions: [],
    };
    const { run, requests } = await play("plan", [
      textReply(`<tool_call>${JSON.stringify({ name: "submit_plan", arguments: plan })}</tool_call>`),
      textReply("unused"),
    ]);
    expect(run.plan?.summary).toBe("Raise the rate.");
    expect(requests).toBe(1);
  });

  test("JSON with a name that is no tool is prose: not run, not nudged", async () => {
    const { requests, staged } = await play("agent", [textReply('{"name": "Alice", "age": 3}')]);
    expect(requests).toBe(1);
    expect(staged).toEqual([]);
  });

  test("a call found in text is run through the seam, and the run's record says so", async () => {
    const call =
      '<tool_call>{"name": "create_file", "arguments": {"path": "src/rate.ts", "content": "export const R = 1;\\n"}}</tool_call>';
    const { staged, notices, events, run } = await play("agent", [textReply(call), textReply("Stopping here.")]);
    expect(staged).toEqual(["src/rate.ts"]);
    expect(notices.some((n) => /create_file call as text; it was run as a tool call/.test(n))).toBe(true);
    // The changeset keeps it with the file, and its summary says it.
    expect(formatSummary(run.changeset!, { color: false })).toContain("wrote this create_file call as text");
    // The same policy event a native call gets.
    expect(events.some((e) => e.type === "policy" && e.tool === "create_file" && e.decision === "allow")).toBe(true);
  });

  test("a text call to a path the rules deny is refused like a native one; nothing staged", async () => {
    const call = '{"name": "write_file", "arguments": {"path": "src/generated/api.ts", "content": "x\\n"}}';
    const { staged, run } = await play("agent", [textReply(call), textReply("Stopping here.")], {
      settings: { permissions: { deny: ["Edit(src/generated/**)"] } },
    });
    expect(staged).toEqual([]);
    expect(JSON.stringify(run.messages)).toContain("permission denied for write of src/generated/api.ts");
  });

  test("apply_patch cannot reach a path edit_file could not: a move into a denied path stages nothing", async () => {
    const patch =
      "*** Begin Patch\n*** Update File: src/dup.ts\n*** Move to: src/generated/dup.ts\n@@\n-function a() {\n+function first() {\n*** End Patch";
    const { staged, run } = await play(
      "agent",
      [
        { kind: "reply", toolCalls: [{ name: "read_file", arguments: { path: "src/dup.ts" } }] },
        { kind: "reply", toolCalls: [{ name: "apply_patch", arguments: { input: patch } }] },
        textReply("Stopping here."),
      ],
      { settings: { permissions: { deny: ["Edit(src/generated/**)"] } } },
    );
    expect(staged).toEqual([]);
    expect(JSON.stringify(run.messages)).toContain("permission denied for write of src/generated/dup.ts");
  });

  test("a context-length refusal is retried once after compaction; a second one ends the run with the error", async () => {
    const tooLong = () =>
      errorReply(400, "Please reduce the length of the messages: context_length_exceeded", "invalid_request_error");
    const { run, events } = await play("agent", [tooLong(), tooLong(), textReply("unused")]);
    expect(run.outcome!.stopped).toBe("error");
    expect(run.outcome!.error).toContain("context_length_exceeded");
    expect(events.filter((e) => e.type === "compacted").length).toBe(1);
  });

  test("at the step limit the staged work stays reviewable as a changeset", async () => {
    const { run } = await play(
      "agent",
      [
        { kind: "reply", toolCalls: [{ name: "read_file", arguments: { path: "src/tax.ts" } }] },
        {
          kind: "reply",
          toolCalls: [{ name: "edit_file", arguments: { path: "src/tax.ts", old_string: "0.10", new_string: "0.2" } }],
        },
        { kind: "reply", toolCalls: [{ name: "read_file", arguments: { path: "src/utils.ts" } }] },
      ],
      { maxSteps: 3 },
    );
    expect(run.outcome!.stopped).toBe("step-limit");
    expect(run.outcome!.note).toContain("read_file (src/utils.ts)");
    expect(run.changeset!.files.map((f) => f.path)).toEqual(["src/tax.ts"]);
  });

  test.skipIf(!sandboxAvailable())(
    "a command's long output is cut to the budget, its head and its tail kept",
    async () => {
      const command = "seq 1 200000";
      const { run } = await play(
        "agent",
        [{ kind: "reply", toolCalls: [{ name: "run_command", arguments: { command } }] }, textReply("Stopping here.")],
        { settings: { permissions: { allow: ["Run(seq *)"] } }, env: { PENCIL_CONTEXT_WINDOW: "8192" } },
      );
      const said = JSON.stringify(run.messages);
      expect(said).toContain("output cut to fit the context window");
      expect(said).toContain("200000");
    },
  );
});
