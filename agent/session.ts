import { hasToolCall, stepCountIs, streamText, type LanguageModel, type ModelMessage, type ToolSet } from "ai";
import { modelLabelOf, reportedCostOf } from "../ai/model-label.ts";
import { compactToolResults, compactTurns } from "./compaction.ts";
import { repairToolCall } from "./tool-call-repair.ts";
import type { ContextMeter, EventSink, TokenUsage } from "./events.ts";

/** Everything one run of the tool loop needs; the same for every mode and both front ends. */
export interface SessionConfig {
  model: LanguageModel;
  /** Label of the model that served the most recent call (the fallback may switch it). */
  modelLabel: () => string;
  system: string;
  tools: ToolSet;
  maxSteps: number;
  /** Context window of the model in tokens; compaction starts at 75 % of it. */
  contextWindow: number;
  emit: EventSink;
  signal?: AbortSignal;
  /** A tool whose call ends the run (plan's submit_plan). */
  stopOnTool?: string;
  /**
   * Called after each finished step that the loop goes on from, with the whole
   * conversation so far and the model of that step (the session saves it here).
   * The last step is not reported: the caller has the outcome's messages.
   */
  onStep?: (messages: ModelMessage[], model: string) => void;
  /** What must survive compaction: the goal, decisions and reasons, applied and staged files (the session's memory). */
  memory?: () => string;
}

/** How a run ended: its final text, the whole conversation so far, totals, and why it stopped. */
export interface SessionOutcome {
  text: string;
  messages: ModelMessage[];
  usage: TokenUsage;
  steps: number;
  toolCalls: number;
  /** Models that produced steps, in order of first use. */
  models: string[];
  stopped: "done" | "step-limit" | "aborted" | "error";
  error?: string;
}

const COMPACT_AT = 0.75;
/** Past this share of the window even after tool results were stubbed, older turns are compacted too. */
const COMPACT_TURNS_AT = 0.9;

/** Runs the tool loop on `messages` until the model stops, the step limit, an abort, or an error. Never throws. */
export async function runSession(config: SessionConfig, messages: ModelMessage[]): Promise<SessionOutcome> {
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  const models: string[] = [];
  let steps = 0;
  let toolCalls = 0;
  let text = "";
  let lastContext = 0;
  let failure: string | undefined;
  let finishReason = "";
  let lastModel = "";
  const responseMessages: ModelMessage[] = [];

  const result = streamText({
    model: config.model,
    system: config.system,
    messages,
    tools: config.tools,
    stopWhen: config.stopOnTool
      ? [stepCountIs(config.maxSteps), hasToolCall(config.stopOnTool)]
      : stepCountIs(config.maxSteps),
    maxRetries: 0,
    repairToolCall,
    ...(config.signal ? { abortSignal: config.signal } : {}),
    prepareStep: ({ messages: current, stepNumber }) => {
      if (stepNumber > 0) config.onStep?.(current, lastModel);
      if (lastContext < config.contextWindow * COMPACT_AT) return undefined;
      const compacted = compactToolResults(current);
      if (compacted.results > 0) config.emit({ type: "compacted", results: compacted.results, chars: compacted.chars });
      // Stubbing results is not enough once the window is nearly full: older turns go too, the memory stays.
      if (lastContext >= config.contextWindow * COMPACT_TURNS_AT) {
        const turns = compactTurns(compacted.messages, config.memory?.() ?? "");
        if (turns.dropped > 0) {
          config.emit({ type: "compacted", results: turns.dropped, chars: 0 });
          return { messages: turns.messages };
        }
      }
      return compacted.results > 0 ? { messages: compacted.messages } : undefined;
    },
    onError: () => {
      // Errors also arrive as stream parts below, where they are handled.
    },
  });

  try {
    for await (const part of result.fullStream) {
      switch (part.type) {
        case "start-step":
          steps += 1;
          text = "";
          config.emit({ type: "step-start", step: steps });
          break;
        case "text-delta":
          text += part.text;
          config.emit({ type: "text", delta: part.text });
          break;
        case "tool-call":
          toolCalls += 1;
          break;
        case "tool-error":
          // Malformed input or a schema mismatch: the SDK sends the error back to the model; show it too.
          config.emit({
            type: "tool-result",
            callId: part.toolCallId,
            tool: part.toolName,
            ok: false,
            output: `Error: ${errorText(part.error)}`,
            ms: 0,
          });
          break;
        case "finish-step": {
          const stepUsage = { inputTokens: part.usage.inputTokens ?? 0, outputTokens: part.usage.outputTokens ?? 0 };
          usage.inputTokens += stepUsage.inputTokens;
          usage.outputTokens += stepUsage.outputTokens;
          lastContext = stepUsage.inputTokens + stepUsage.outputTokens;
          // The fallback model stamps each step with the model that really produced it.
          const model = modelLabelOf(part.providerMetadata) ?? config.modelLabel();
          if (!models.includes(model)) models.push(model);
          lastModel = model;
          const context: ContextMeter = { used: lastContext, window: config.contextWindow };
          const cost = reportedCostOf(part.providerMetadata);
          config.emit({
            type: "step-end",
            step: steps,
            model,
            usage: stepUsage,
            context,
            ...(cost !== undefined ? { cost } : {}),
          });
          finishReason = part.finishReason;
          break;
        }
        case "error":
          failure = errorText(part.error);
          break;
        case "abort":
          break;
      }
    }
    const produced = await Promise.resolve(result.responseMessages).catch(() => []);
    responseMessages.push(...(produced as ModelMessage[]));
  } catch (error) {
    failure = errorText(error);
  }

  const aborted = config.signal?.aborted ?? false;
  if (failure && !aborted) config.emit({ type: "error", message: failure });
  return {
    text,
    messages: [...messages, ...responseMessages],
    usage,
    steps,
    toolCalls,
    models,
    stopped: aborted
      ? "aborted"
      : failure
        ? "error"
        : finishReason === "tool-calls" && steps >= config.maxSteps
          ? "step-limit"
          : "done",
    ...(failure && !aborted ? { error: failure } : {}),
  };
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : JSON.stringify(error);
}
