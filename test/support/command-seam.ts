// The policy seam over tools as the model calls them, with an Approver that answers from a script.
import type { SessionEvent } from "../../agent/events.ts";
import { guardTools } from "../../agent/policy-seam.ts";
import type { ToolOutcome } from "../../agent/tool-outcome.ts";
import { DiskFileOps } from "../../core/file-ops.ts";
import type { Approver, PermissionAnswer, PermissionQuestion } from "../../core/policy/approver.ts";
import { compilePolicy, type Rule } from "../../core/policy/policy.ts";
import { Overlay } from "../../core/staging/overlay.ts";
import { ReadLedger } from "../../core/staging/read-ledger.ts";
import { DEFAULT_LIMITS } from "../../core/tool-limits.ts";
import { openWorkspace } from "../../core/workspace.ts";
import type { PencilTool } from "../../tools/tool.ts";
import { tempDir } from "./run-command-world.ts";
import { join } from "node:path";

/** An Approver that records every question and answers from a script (then no). */
export function scriptedApprover(answers: PermissionAnswer[]): Approver & { questions: PermissionQuestion[] } {
  const questions: PermissionQuestion[] = [];
  return {
    questions,
    async ask(question) {
      questions.push(question);
      return answers.shift() ?? { kind: "no" };
    },
  };
}

/** The policy seam over the given tools, with Run rules; `exec` calls a tool as the model would. */
export function seam(tools: PencilTool[], rules: Rule[], approver: Approver) {
  const ws = openWorkspace(tempDir("pencil-run-seam-"));
  const policy = compilePolicy({ workspaceRoot: ws.root, home: ws.home, pencilHome: join(tempDir(), "ph"), rules });
  const events: SessionEvent[] = [];
  const set = guardTools(tools, {
    ws,
    policy,
    approver,
    fs: new Overlay(new DiskFileOps()),
    reads: new ReadLedger(),
    limits: DEFAULT_LIMITS,
    currentModel: () => "test:model",
    emit: (e) => events.push(e),
  });
  let n = 0;
  const exec = (name: string, command: string): Promise<string> =>
    (set[name] as unknown as { execute: (input: unknown, options: unknown) => Promise<ToolOutcome> })
      .execute({ command }, { toolCallId: `call-${++n}`, messages: [] })
      .then((o) => o.text);
  return { exec, events };
}
