import {
  extractReasoningMiddleware,
  hasToolCall,
  stepCountIs,
  streamText,
  wrapLanguageModel,
  type LanguageModel,
  type ModelMessage,
  type StopCondition,
  type ToolSet,
} from "ai";
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
  /** Why the run must stop now (a loop of identical calls), checked after each step; null while it may go on. */
  mustStop?: () => string | null;
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
  stopped: "done" | "step-limit" | "aborted" | "error" | "loop";
  error?: string;
  /** The provider's finish reason of the last step (`stop`, `length`, `tool-calls`…). */
  finishReason: string;
  /** Reasoning of the last step (native, or `<think>` blocks taken out of its text). */
  reasoning: string;
  /** Tool calls the last step made. */
  lastStepCalls: number;
  /** For the owner, when the run stopped early: what it was doing, why it stopped. */
  note?: string;
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
  let reasoning = "";
  let stepCalls = 0;
  let loop: string | null = null;
  /** The conversation as the last step was sent it: what is kept when a later step fails. */
  let latest: ModelMessage[] = messages;
  const responseMessages: ModelMessage[] = [];
  const stopWhen: StopCondition<ToolSet>[] = [stepCountIs(config.maxSteps)];
  if (config.stopOnTool) stopWhen.push(hasToolCall(config.stopOnTool));
  if (config.mustStop)
    stopWhen.push(() => {
      loop ??= config.mustStop!();
      return loop !== null;
    });

  const result = streamText({
    model: withThinkTags(config.model),
    system: config.system,
    messages,
    tools: config.tools,
    stopWhen,
    maxRetries: 0,
    repairToolCall,
    ...(config.signal ? { abortSignal: config.signal } : {}),
    prepareStep: ({ messages: current, stepNumber }) => {
      latest = current;
      if (stepNumber > 0) config.onStep?.(current, lastModel);
      // The model's wait begins here, not at its first byte: front ends show it from now (spinner, typing…).
      config.emit({ type: "model-request", step: stepNumber + 1 });
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
          reasoning = "";
          stepCalls = 0;
          config.emit({ type: "step-start", step: steps });
          break;
        case "reasoning-delta":
          reasoning += part.text;
          config.emit({ type: "thinking", delta: part.text });
          break;
        case "text-delta":
          text += part.text;
          config.emit({ type: "text", delta: part.text });
          break;
        case "tool-call":
          toolCalls += 1;
          stepCalls += 1;
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
  // A failed step leaves no response messages: the conversation it was sent is what there is.
  const all = responseMessages.length > 0 || !failure ? [...messages, ...responseMessages] : latest;
  const stopped: SessionOutcome["stopped"] = aborted
    ? "aborted"
    : failure
      ? "error"
      : loop !== null
        ? "loop"
        : finishReason === "tool-calls" && steps >= config.maxSteps
          ? "step-limit"
          : "done";
  const note =
    stopped === "loop"
      ? loop!
      : stopped === "step-limit"
        ? `It reached its limit of ${config.maxSteps} steps while ${lastActivity(all)}. What it staged so far is kept for review.`
        : undefined;
  return {
    text,
    messages: all,
    usage,
    steps,
    toolCalls,
    models,
    stopped,
    finishReason,
    reasoning,
    lastStepCalls: stepCalls,
    ...(failure && !aborted ? { error: failure } : {}),
    ...(note ? { note } : {}),
  };
}

/** `<think>…</think>` in a model's text (Qwen, DeepSeek-R1 through Ollama) is reasoning, not the answer: taken out as such. */
function withThinkTags(model: LanguageModel): LanguageModel {
  if (typeof model !== "object" || model === null || !("doStream" in model)) return model;
  return wrapLanguageModel({ model, middleware: extractReasoningMiddleware({ tagName: "think" }) });
}

/** The last tool calls of a conversation, in words: "calling edit_file (src/a.ts), run_command (`npm test`)". */
function lastActivity(messages: ModelMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "assistant" || typeof m.content === "string") continue;
    const calls = m.content.filter((p) => p.type === "tool-call");
    if (calls.length === 0) continue;
    const described = calls.slice(0, 3).map((c) => {
      const input = (c.input ?? {}) as Record<string, unknown>;
      const subject = input.path ?? input.command ?? input.pattern ?? input.query;
      return typeof subject === "string" ? `${c.toolName} (${subject.slice(0, 80)})` : c.toolName;
    });
    return `calling ${described.join(", ")}${calls.length > 3 ? ", …" : ""}`;
  }
  return "answering without tool calls";
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : JSON.stringify(error);
}
