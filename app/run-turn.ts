import type { ModelMessage } from "ai";
import type { EventSink } from "../agent/events.ts";
import { RepeatedCalls } from "../agent/nudges.ts";
import { guardTools } from "../agent/policy-seam.ts";
import { type RunMode, systemPrompt } from "../agent/prompts.ts";
import { runSession, type SessionOutcome } from "../agent/session.ts";
import { runToTheEnd } from "../agent/turn-end.ts";
import { answerBudgetFor } from "../core/answer-budget.ts";
import type { Plan } from "../core/plan-schema.ts";
import type { Approver } from "../core/policy/approver.ts";
import { LinkGuard } from "../core/policy/hard-links.ts";
import { createSubmitPlanTool } from "../tools/submit-plan.ts";
import type { PencilTool } from "../tools/tool.ts";
import { openRunMcp } from "./mcp-servers.ts";
import type { RunModels } from "./model-choice.ts";
import { instructionsFor, instructionsPrompt } from "./project-instructions.ts";
import type { RunStaging } from "./run-staging.ts";
import type { Runtime } from "./runtime.ts";
import type { SessionKeeper } from "./session-keeper.ts";
import { toolsFor } from "./toolbox.ts";

/** Who answers and who listens during a run; `signal` stops it (Ctrl-C, /cancel). */
export interface RunHooks {
  approver: Approver;
  emit: EventSink;
  signal?: AbortSignal;
}

/** How a turn runs the model, when a front end or a test wants other than the mode's own. */
export interface TurnOptions {
  /** Tools added to the mode's own (plan's fetch_url, submit_plan…). */
  extraTools?: PencilTool[];
  maxSteps?: number;
  /** Overrides the mode's system prompt. */
  system?: string;
}

/** Everything one turn of a run works with: the run's staging, models and session, and its conversation so far. */
export interface TurnInput {
  runtime: Runtime;
  mode: RunMode;
  /** The session's goal, for the running mark. */
  goal: string;
  options: TurnOptions;
  staging: RunStaging;
  models: RunModels;
  keeper: SessionKeeper;
  messages: ModelMessage[];
  /** What compaction keeps whatever else goes. */
  memory: () => string;
  /** What a front end wants kept with the running mark. */
  runTag: () => Record<string, string | number> | undefined;
  /** A plan run's plan, once the model submits it. */
  onPlan: (plan: Plan) => void;
}

const DEFAULT_MAX_STEPS = 40;

/**
 * One turn: the model works on the conversation until it is done (or stopped), every tool call through the
 * policy seam, staging into the run's overlay, each step saved to the session. The run's MCP servers and the
 * mode's tools live for this turn only. Returns how it ended; the caller saves the changeset.
 */
export async function runTurn(input: TurnInput, hooks: RunHooks): Promise<SessionOutcome> {
  const mcp = await openRunMcp(input.runtime, hooks.approver, hooks.signal);
  for (const notice of mcp.notices) hooks.emit({ type: "notice", message: notice });
  try {
    // The mode's tools are made for this run alone: what they keep for it (run_command's scratch) goes when it ends.
    const own = toolsFor(input.mode, input.runtime);
    try {
      return await runWithTools(input, hooks, own, mcp.tools);
    } finally {
      await Promise.all(own.map((t) => t.close?.().catch(() => {})));
    }
  } finally {
    await mcp.close();
  }
}

async function runWithTools(
  input: TurnInput,
  hooks: RunHooks,
  own: PencilTool[],
  mcpTools: PencilTool[],
): Promise<SessionOutcome> {
  const { runtime, mode, staging, keeper } = input;
  const models = () => input.models.choice;
  // A plan run ends when the model submits its plan, parsed by the plan schema.
  const planTools = mode === "plan" ? [createSubmitPlanTool(input.onPlan)] : [];
  const repeats = new RepeatedCalls();
  const tools = guardTools([...own, ...planTools, ...(input.options.extraTools ?? []), ...mcpTools], {
    ws: runtime.ws,
    policy: runtime.policy,
    approver: hooks.approver,
    fs: staging.overlay,
    reads: staging.reads,
    limits: runtime.limits,
    currentModel: () => models().current(),
    emit: hooks.emit,
    // Fresh each run: hard links made since the last one are indexed again.
    mcpPolicy: runtime.mcpPolicy,
    links: new LinkGuard({ root: runtime.ws.root, home: runtime.ws.home, pencilHome: runtime.pencilHome }),
    recordCommand: (record) => staging.commands.push(record),
    answerBudget: answerBudgetFor(models().contextWindow),
    repeats,
    ...(hooks.signal ? { signal: hooks.signal } : {}),
  });
  const tag = input.runTag();
  keeper.running({ kind: mode, goal: input.goal, ...(tag ? { tag } : {}) });
  const maxSteps = input.options.maxSteps ?? DEFAULT_MAX_STEPS;
  const session = (messages: ModelMessage[], stepsLeft: number) =>
    runSession(
      {
        model: models().model,
        modelLabel: () => models().current(),
        // The repository's AGENTS.md goes after Pencil's own rules, framed as ranking below them and the goal.
        system: (input.options.system ?? systemPrompt(mode)) + instructionsPrompt(instructionsFor(runtime)),
        tools,
        maxSteps: stepsLeft,
        contextWindow: models().contextWindow,
        emit: hooks.emit,
        ...(hooks.signal ? { signal: hooks.signal } : {}),
        ...(mode === "plan" ? { stopOnTool: "submit_plan" } : {}),
        memory: input.memory,
        mustStop: () => repeats.stopReason,
        onStep: (messages, model) => keeper.step(messages, staging.overlay, runtime.ws, model),
      },
      messages,
    );
  // How each round ended is looked at before the run ends "done" (a call written as text, an empty or cut reply, a claim with nothing staged).
  return runToTheEnd(session, input.messages, {
    tools,
    nothingStaged: () => staging.overlay.list().length === 0,
    emit: hooks.emit,
    memory: input.memory,
    maxSteps,
    writes: mode === "agent",
    ...(mode === "plan" ? { stopOnTool: "submit_plan" } : {}),
  });
}
