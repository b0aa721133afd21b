import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { asSchema, zodSchema } from "ai";
import { nobodyApprover } from "../../core/policy/approver.ts";
import { looksLikeCodeInProse, RepeatedCalls, USE_TOOLS_NUDGE } from "../../agent/nudges.ts";
import { lenientSchema, normalizeInput, readArguments, resolveToolName } from "../../agent/tool-call-repair.ts";
import { lastToolResults, ScriptedModel, type ScriptedTurn } from "../../ai/scripted-model.ts";
import { AgentRun } from "../../app/agent-run.ts";
import { createRuntime } from "../../app/runtime.ts";
import { createEditFileTool } from "../../tools/edit-file.ts";
import { createReadFileTool } from "../../tools/read-file.ts";
import { createSearchTool } from "../../tools/search.ts";
import type { PencilTool } from "../../tools/tool.ts";
import { createWriteFileTool } from "../../tools/write-file.ts";
import { tempDir, writeTree } from "../support/temp.ts";

// The loop's side of the ways small models fail: tool calls repaired, nudges given (the
// loop-level replay is test/agent/recovery-loop.test.ts; the tools' own answers are
// test/tools/recovery-modes.test.ts).
const edit = createEditFileTool();
const write = createWriteFileTool();
const readTool = createReadFileTool();
const search = createSearchTool({ rgPath: null });
describe("tool-call repair", () => {
  const tools = [
    "read_file",
    "list_files",
    "search",
    "edit_file",
    "write_file",
    "create_file",
    "delete_file",
    "run_command",
  ];
  for (const [given, real] of [
    ["Read_File", "read_file"],
    ["readFile", "read_file"],
    ["READ-FILE", "read_file"],
    ["functions.edit_file", "edit_file"],
    ["str_replace_editor", "edit_file"],
    ["grep", "search"],
    ["bash", "run_command"],
    ["teleport", null],
  ] as const) {
    test(`tool name ${given} → ${real}`, () => expect(resolveToolName(given, tools)).toBe(real));
  }

  test("the model is still shown each tool's own schema", async () => {
    for (const t of [edit, readTool, write, search] as PencilTool[]) {
      expect(await asSchema(lenientSchema(t)).jsonSchema).toEqual(
        await zodSchema(t.modelSchema ?? t.inputSchema).jsonSchema,
      );
    }
  });

  test("a name maps only to a tool the run has (a plan run has no edit_file)", () => {
    expect(resolveToolName("str_replace_editor", ["read_file", "search"])).toBeNull();
  });

  for (const [text, expected] of [
    ["{'path': 'a.ts'}", { path: "a.ts" }],
    ['{"path": "a.ts",}', { path: "a.ts" }],
    ['"{\\"path\\": \\"a.ts\\"}"', { path: "a.ts" }],
    ['```json\n{"path": "a.ts"}\n```', { path: "a.ts" }],
    ['{"path": "a.ts"', { path: "a.ts" }],
  ] as const) {
    test(`arguments ${JSON.stringify(text)} read unambiguously`, () =>
      expect(readArguments(text)).toEqual({ ok: true, value: expected }));
  }

  for (const [text, says] of [
    ['{"path": "a.ts", "content": "half', "cut off"],
    ['{"path": "a.ts", "content":', "cut off"],
    ['{"path": "a.ts", "offset": 5', "cut off"],
    ["[1, 2]", "JSON object"],
  ] as const) {
    test(`arguments ${JSON.stringify(text)} get one readable line`, () => {
      const read = readArguments(text);
      expect(read.ok).toBe(false);
      if (!read.ok) {
        expect(read.message).toContain(says);
        expect(read.message).not.toContain("\n");
      }
    });
  }

  test("misnamed fields and number/boolean strings fit the schema; what does not fit is one line", () => {
    expect(normalizeInput(edit, { filePath: "a", old_str: "x", newString: "y", replace_all: "TRUE" })).toEqual({
      ok: true,
      value: { path: "a", old_string: "x", new_string: "y", replace_all: true },
    });
    expect(normalizeInput(readTool, { path: "a", offset: "3" })).toEqual({ ok: true, value: { path: "a", offset: 3 } });
    const bad = normalizeInput(readTool, { path: "a", offset: "three" });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.message).toContain("offset must be a number");
      expect(bad.message).not.toContain("\n");
      expect(bad.message).not.toContain('"expected"');
    }
  });
});

function runtimeFor(files: Record<string, string>) {
  const ws = tempDir();
  writeTree(ws, files);
  const home = tempDir();
  return createRuntime({ env: { HOME: home, PENCIL_HOME: join(home, ".pencil") }, workspace: ws });
}

async function play(mode: "agent" | "ask", files: Record<string, string>, turns: ScriptedTurn[]) {
  const runtime = runtimeFor(files);
  const model = new ScriptedModel(turns, { name: "weak" });
  const models = { model, labels: [model.label], current: () => model.label, contextWindow: 100_000 };
  const run = await AgentRun.start(runtime, mode, "go", { approver: nobodyApprover, emit: () => {} }, { models });
  return { run, model };
}

describe("nudges in the loop", () => {
  for (const [text, code] of [
    ["Here:\n```ts\nconst a = 2;\n```", true],
    ["function f() {\n  return 1;\n}", true],
    ["I changed src/a.ts: the rate is now 0.2.", false],
    ["Use `const` here.", false],
  ] as const) {
    test(`${JSON.stringify(text)} looks like code in prose: ${code}`, () =>
      expect(looksLikeCodeInProse(text)).toBe(code));
  }

  test("code in prose gets exactly one nudge; a second such reply ends the run", async () => {
    const prose = { text: "```ts\nconst a = 2;\n```" };
    const { run, model } = await play("agent", { "a.ts": "const a = 1;\n" }, [prose, prose]);
    expect(model.calls.length).toBe(2);
    expect(JSON.stringify(model.prompts[1])).toContain(USE_TOOLS_NUDGE);
    expect(run.outcome!.stopped).toBe("done");
    expect(run.overlay.list()).toEqual([]);
  });

  test("no nudge in ask mode, nor after something was staged", async () => {
    const prose = { text: "```ts\nconst a = 2;\n```" };
    expect((await play("ask", { "a.ts": "x\n" }, [prose])).model.calls.length).toBe(1);
    const staged = await play("agent", { "a.ts": "x\n" }, [
      { toolCalls: [{ name: "create_file", input: { path: "b.ts", content: "y\n" } }] },
      prose,
    ]);
    expect(staged.model.calls.length).toBe(2);
  });

  test("the third identical failing call is told to change approach; a different call is not", () => {
    const r = new RepeatedCalls();
    const input = { path: "a", old_string: "x", new_string: "y" };
    expect(r.answer("edit_file", input, false, "Error: no")).toBe("Error: no");
    expect(r.answer("edit_file", { ...input, new_string: "z" }, false, "Error: no")).toBe("Error: no");
    expect(r.answer("edit_file", { new_string: "y", old_string: "x", path: "a" }, false, "Error: no")).toBe(
      "Error: no",
    );
    expect(r.answer("edit_file", input, false, "Error: no")).toContain("failed 3 times");
    expect(r.answer("read_file", { path: "a" }, true, "ok")).toBe("ok");
  });

  test("a 20 MB old_string through the loop gets the size answer, and the file is untouched", async () => {
    const huge = "x".repeat(20 * 1024 * 1024);
    const { run, model } = await play("agent", { "a.ts": "const a = 1;\n" }, [
      { toolCalls: [{ name: "read_file", input: { path: "a.ts" } }] },
      { toolCalls: [{ name: "edit_file", input: { path: "a.ts", old_string: huge, new_string: "y" } }] },
      { text: "ok" },
    ]);
    const [result] = lastToolResults(model.prompts[2]!);
    expect(result!.output).toContain("old_string is 20,971,520 characters, over the 2,097,152-character limit");
    expect(result!.output).not.toMatch(/regular expression/i);
    expect(run.overlay.list()).toEqual([]);
  });

  test("a leading / that names a denied workspace file gets no hint: the policy answers as before", async () => {
    const { model } = await play("agent", { ".env": "SECRET=1\n" }, [
      { toolCalls: [{ name: "read_file", input: { path: "/.env" } }] },
      { text: "ok" },
    ]);
    const [result] = lastToolResults(model.prompts[1]!);
    expect(result!.output).not.toContain('use ".env"');
    expect(result!.output).not.toContain("SECRET");
  });
});
