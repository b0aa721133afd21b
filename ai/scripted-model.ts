import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { withModelLabel } from "./model-label.ts";

/** A tool call the script makes: `input` is sent JSON-encoded; `rawInput` is sent verbatim (e.g. malformed JSON). */
export interface ScriptedToolCall {
  name: string;
  input?: unknown;
  rawInput?: string;
  /** Defaults to `call_<turn>_<index>`. */
  id?: string;
}

/** What the model says in one turn: reasoning, then text, then tool calls (any may be absent). */
export interface ScriptedReply {
  reasoning?: string;
  text?: string;
  toolCalls?: ScriptedToolCall[];
}

/** What a computed turn is given: the prompt the model received and the turn's index (0-based). */
export interface ScriptedTurnContext {
  prompt: LanguageModelV4Prompt;
  turn: number;
}

/** One turn of the script: a fixed reply, or one computed from the prompt (to react to a tool result). */
export type ScriptedTurn = ScriptedReply | ((context: ScriptedTurnContext) => ScriptedReply);

/** A call the scripted model received, recorded for assertions. */
export interface ScriptedCall {
  /** A copy of the prompt as the model received it. */
  prompt: LanguageModelV4Prompt;
  /** Names of the tools offered. */
  toolNames: string[];
}

/**
 * The answer to a structured-output call (one that asks for JSON, as the intent check does): `json`
 * is sent JSON-encoded, `text` verbatim (junk, to test the schema check); `error` makes the call
 * fail with it; `delayMs` waits first (to test a timeout), unless the call is aborted.
 */
export interface ScriptedStructured {
  json?: unknown;
  text?: string;
  error?: string;
  delayMs?: number;
}

/** Options of a scripted model. */
export interface ScriptedModelOptions {
  /**
   * Answers to structured-output calls, in order, apart from the turns: such a call plays none of the
   * script's turns, so an intent check after a run leaves the script as it was. Without one left, it fails.
   */
  structured?: ScriptedStructured[];
  /** Model name; the label is `scripted:<name>` (default `scripted:demo`). */
  name?: string;
  /** Characters per text delta (default 24). */
  chunkChars?: number;
}

/** A tool result as text, found in a prompt; see `lastToolResults`. */
export interface PromptToolResult {
  toolCallId: string;
  toolName: string;
  /** The output as the model reads it (JSON values are JSON-encoded). */
  output: string;
  isError: boolean;
}

/**
 * A language model that plays a fixed sequence of turns, one per call, as real
 * stream parts (text deltas, tool calls, finish with usage), so `streamText`
 * drives the real tool loop with it. Used by `pencil demo` and tests. Records
 * every prompt it receives. A call past the last turn fails with a message
 * saying the script ran out.
 */
export class ScriptedModel implements LanguageModelV4 {
  readonly specificationVersion = "v4";
  readonly provider = "scripted";
  readonly modelId: string;
  /** `scripted:<name>`: what steps of this model are labelled with. */
  readonly label: string;
  readonly supportedUrls = {};
  /** Every call received, in order. */
  readonly calls: ScriptedCall[] = [];
  /** Every structured-output call received, in order (not in `calls`). */
  readonly structuredCalls: ScriptedCall[] = [];
  private readonly turns: ScriptedTurn[];
  private readonly structured: ScriptedStructured[];
  private readonly chunkChars: number;

  constructor(turns: ScriptedTurn[], options: ScriptedModelOptions = {}) {
    this.turns = turns;
    this.structured = options.structured ?? [];
    this.modelId = options.name ?? "demo";
    this.label = `scripted:${this.modelId}`;
    this.chunkChars = Math.max(1, options.chunkChars ?? 24);
  }

  /** The prompts received, in order. */
  get prompts(): LanguageModelV4Prompt[] {
    return this.calls.map((c) => c.prompt);
  }

  /** Turns not played yet. */
  get remaining(): number {
    return this.turns.length - this.calls.length;
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    if (options.responseFormat?.type === "json") return this.answerStructured(options);
    const { reply, turn } = this.play(options);
    const content: LanguageModelV4Content[] = [];
    if (reply.reasoning) content.push({ type: "reasoning", text: reply.reasoning });
    if (reply.text) content.push({ type: "text", text: reply.text });
    for (const call of toolCallsOf(reply, turn)) content.push({ type: "tool-call", ...call });
    return {
      content,
      finishReason: finishReasonOf(reply),
      usage: usageOf(options.prompt, reply),
      providerMetadata: withModelLabel(undefined, this.label),
      response: { id: `scripted-${turn}`, modelId: this.modelId, timestamp: new Date() },
      warnings: [],
    };
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const { reply, turn } = this.play(options);
    const parts: LanguageModelV4StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "response-metadata", id: `scripted-${turn}`, modelId: this.modelId, timestamp: new Date() },
    ];
    if (reply.reasoning) {
      parts.push({ type: "reasoning-start", id: "reasoning-0" });
      for (const delta of chunks(reply.reasoning, this.chunkChars))
        parts.push({ type: "reasoning-delta", id: "reasoning-0", delta });
      parts.push({ type: "reasoning-end", id: "reasoning-0" });
    }
    if (reply.text) {
      parts.push({ type: "text-start", id: "text-0" });
      for (const delta of chunks(reply.text, this.chunkChars)) parts.push({ type: "text-delta", id: "text-0", delta });
      parts.push({ type: "text-end", id: "text-0" });
    }
    for (const call of toolCallsOf(reply, turn)) {
      parts.push({ type: "tool-input-start", id: call.toolCallId, toolName: call.toolName });
      parts.push({ type: "tool-input-delta", id: call.toolCallId, delta: call.input });
      parts.push({ type: "tool-input-end", id: call.toolCallId });
      parts.push({ type: "tool-call", ...call });
    }
    parts.push({
      type: "finish",
      finishReason: finishReasonOf(reply),
      usage: usageOf(options.prompt, reply),
      providerMetadata: withModelLabel(undefined, this.label),
    });
    return {
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    };
  }

  /** Plays the next structured answer; throws when none is left, or when it is an error. */
  private async answerStructured(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const index = this.structuredCalls.length;
    this.structuredCalls.push({
      prompt: structuredClone(options.prompt),
      toolNames: (options.tools ?? []).map((t) => t.name),
    });
    const answer = this.structured[index];
    if (answer === undefined)
      throw new Error(
        `The scripted model ${this.label} has no structured answer ${index + 1}: its script has ${this.structured.length}.`,
      );
    if (answer.delayMs) await sleep(answer.delayMs, options.abortSignal);
    if (answer.error !== undefined) throw new Error(answer.error);
    const text = answer.text ?? JSON.stringify(answer.json ?? {});
    return {
      content: [{ type: "text", text }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: usageOf(options.prompt, { text }),
      providerMetadata: withModelLabel(undefined, this.label),
      response: { id: `scripted-structured-${index}`, modelId: this.modelId, timestamp: new Date() },
      warnings: [],
    };
  }

  /** Records the call and picks its turn; throws when the script has no turn left. */
  private play(options: LanguageModelV4CallOptions): { reply: ScriptedReply; turn: number } {
    const turn = this.calls.length;
    const prompt = structuredClone(options.prompt);
    this.calls.push({ prompt, toolNames: (options.tools ?? []).map((t) => t.name) });
    const scripted = this.turns[turn];
    if (scripted === undefined) {
      throw new Error(
        `The scripted model ${this.label} has no turn ${turn + 1}: its script has ${this.turns.length}. Add a turn, or stop the loop earlier.`,
      );
    }
    const reply = typeof scripted === "function" ? scripted({ prompt, turn }) : scripted;
    return { reply, turn };
  }
}

/** The tool results of the latest tool message in `prompt` (the results the model is reacting to), as text. */
export function lastToolResults(prompt: LanguageModelV4Prompt): PromptToolResult[] {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i]!;
    if (message.role === "assistant") return [];
    if (message.role !== "tool") continue;
    return message.content.flatMap((part) =>
      part.type === "tool-result"
        ? [
            {
              toolCallId: part.toolCallId,
              toolName: part.toolName,
              output: outputText(part.output),
              isError: isErrorOutput(part.output),
            },
          ]
        : [],
    );
  }
  return [];
}

function outputText(output: LanguageModelV4ToolResultOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    case "execution-denied":
      return output.reason ?? "execution denied";
    case "content":
      return output.value.map((v) => (v.type === "text" ? v.text : `[${v.type}]`)).join("\n");
  }
}

function isErrorOutput(output: LanguageModelV4ToolResultOutput): boolean {
  return output.type === "error-text" || output.type === "error-json" || output.type === "execution-denied";
}

function toolCallsOf(reply: ScriptedReply, turn: number): { toolCallId: string; toolName: string; input: string }[] {
  return (reply.toolCalls ?? []).map((call, index) => ({
    toolCallId: call.id ?? `call_${turn}_${index}`,
    toolName: call.name,
    input: call.rawInput ?? JSON.stringify(call.input ?? {}),
  }));
}

function finishReasonOf(reply: ScriptedReply): LanguageModelV4GenerateResult["finishReason"] {
  return (reply.toolCalls ?? []).length > 0
    ? { unified: "tool-calls", raw: "tool_calls" }
    : { unified: "stop", raw: "stop" };
}

/** Rough token counts (4 characters a token), so usage is plausible and grows with the prompt. */
function usageOf(prompt: LanguageModelV4Prompt, reply: ScriptedReply): LanguageModelV4Usage {
  const input = Math.ceil(JSON.stringify(prompt).length / 4);
  const output = Math.ceil(
    ((reply.reasoning ?? "").length + (reply.text ?? "").length + JSON.stringify(reply.toolCalls ?? []).length) / 4,
  );
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}

/** Waits `ms`, or until `signal` aborts (then throws its reason). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
