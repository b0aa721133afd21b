import { ScriptedModel, type ScriptedTurn } from "../../ai/scripted-model.ts";
import { AgentRun } from "../../app/agent-run.ts";
import { createRuntime } from "../../app/runtime.ts";
import { nobodyApprover } from "../../core/policy/approver.ts";

/**
 * An agent run made in the test's own process with a scripted model and saved where the CLI keeps
 * its sessions (`env`'s PENCIL_HOME), as another terminal or the phone would leave one: the state a
 * test of a later command starts from, without starting an `agent` process (~0.3 CPU-s) to make it.
 * Nothing is asked (every question is answered no); its changeset, if any, stays pending.
 */
export async function savedScriptedRun(
  env: Record<string, string>,
  workspace: string,
  goal: string,
  turns: ScriptedTurn[],
): Promise<AgentRun> {
  const model = new ScriptedModel(turns);
  return AgentRun.start(
    createRuntime({ env, workspace }),
    "agent",
    goal,
    { approver: nobodyApprover, emit: () => {} },
    { models: { model, labels: [model.label], current: () => model.label, contextWindow: 100_000 } },
  );
}

/** A scripted turn that creates `path` holding `content`. */
export const scriptedCreate = (path: string, content: string): ScriptedTurn => ({
  toolCalls: [{ name: "create_file", input: { path, content } }],
});
