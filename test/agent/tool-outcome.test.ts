import { expect, test } from "bun:test";
import { stepCountIs, streamText } from "ai";
import { join } from "node:path";
import { nobodyApprover } from "../../core/policy/approver.ts";
import { guardTools } from "../../agent/policy-seam.ts";
import { toModelOutput, toolFailure, toolSuccess } from "../../agent/tool-outcome.ts";
import { lastToolResults, ScriptedModel } from "../../ai/scripted-model.ts";
import { DiskFileOps } from "../../core/file-ops.ts";
import { Overlay } from "../../core/staging/overlay.ts";
import { compilePolicy } from "../../core/policy/policy.ts";
import { ReadLedger } from "../../core/staging/read-ledger.ts";
import { createReadFileTool } from "../../tools/read-file.ts";
import { DEFAULT_LIMITS } from "../../core/tool-limits.ts";
import { openWorkspace } from "../../core/workspace.ts";
import { tempDir, writeTree } from "../support/temp.ts";

test("a failure is the provider's error output with the very text the model read before; a success is plain text", () => {
  expect(toModelOutput(toolFailure("permission denied."))).toEqual({
    type: "error-text",
    value: "Error: permission denied.",
  });
  expect(toModelOutput(toolSuccess("alpha"))).toEqual({ type: "text", value: "alpha" });
});

test("through the real loop, a denied read reaches the model marked as an error, a read that ran does not", async () => {
  const dir = tempDir();
  writeTree(dir, { "a.txt": "alpha\n", ".env": "API_TOKEN=hunter2\n" });
  const ws = openWorkspace(dir);
  const policy = compilePolicy({
    workspaceRoot: ws.root,
    home: tempDir(),
    pencilHome: join(tempDir(), "ph"),
    rules: [],
  });
  const tools = guardTools([createReadFileTool()], {
    ws,
    policy,
    approver: nobodyApprover,
    fs: new Overlay(new DiskFileOps()),
    reads: new ReadLedger(),
    limits: DEFAULT_LIMITS,
    currentModel: () => "test:model",
    emit: () => {},
  });
  const model = new ScriptedModel([
    {
      toolCalls: [
        { name: "read_file", input: { path: ".env" } },
        { name: "read_file", input: { path: "a.txt" } },
      ],
    },
    { text: "done" },
  ]);
  await streamText({ model, tools, prompt: "read", stopWhen: stepCountIs(3) }).consumeStream();
  const [denied, read] = lastToolResults(model.prompts[1]!);
  expect(denied?.isError).toBe(true);
  expect(denied?.output).toMatch(/^Error: permission denied for read of \.env\./);
  expect(read?.isError).toBe(false);
  expect(read?.output).toContain("alpha");
  expect(read?.output).not.toContain("hunter2");
});
