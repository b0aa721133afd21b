// Before a run ends "done", how it ended is looked at: a small model often stops
// with nothing done and a reply that looks finished. Each kind of ending is acted
// on once, never silently (a notice is emitted, the conversation keeps what
// was said): a call written as text is run as the call it is, through the same
// tools, policy and review; the others get one targeted nudge and the run goes on.

import { asSchema, type ModelMessage, type ToolResultPart, type ToolSet } from "ai";
import { TEXT_CALL_PREFIX } from "../tools/staging-helpers.ts";
import { compactToolResults, compactTurns } from "./compaction.ts";
import type { EventSink } from "./events.ts";
import { looksLikeCodeInProse, USE_TOOLS_NUDGE } from "./nudges.ts";
import type { SessionOutcome } from "./session.ts";
import { findTextToolCalls } from "./text-tool-calls.ts";
import { editorCommand, invalidReason, resolveToolName, UNREADABLE_CALL } from "./tool-call-repair.ts";
import { toModelOutput, type ToolOutcome } from "./tool-outcome.ts";

/** What the end-of-turn checks need besides the session itself. */
export interface TurnEndDeps {
  /** The guarded tools of the run: a call found in text runs through them, so the seam judges it like any other. */
  tools: ToolSet;
  /** True while nothing is staged. */
  nothingStaged: () => boolean;
  emit: EventSink;
  /** The session's memory, kept when the conversation is compacted after a context-length error. */
  memory?: () => string;
  /** The run's step limit, shared by every round. */
  maxSteps: number;
  /** Agent runs change files: a success claim with nothing staged, and code in prose, are checked only there. */
  writes: boolean;
  /** A tool whose call ends the run (plan's submit_plan): written as text and run, it ends the run too. */
  stopOnTool?: string;
}

/** The tools whose failure means a change the model meant was not staged. */
const WRITE_TOOLS = new Set(["edit_file", "write_file", "create_file", "delete_file", "apply_patch"]);

/** A provider's refusal of a request too long for the model's window (Groq, OpenRouter, OpenAI, Ollama, llama.cpp wordings). */
export function isContextLengthError(message: string | undefined): boolean {
  return (
    message !== undefined &&
    /context[ _-]?length|context window|maximum context|too many tokens|prompt is too long|exceeds? the (?:model'?s? )?(?:context|maximum)|context_length_exceeded|reduce the length of the messages|n_ctx/i.test(
      message,
    )
  );
}

/** A reply that says the work is done ("I updated…", "Done.", "has been fixed"). */
export function claimsSuccess(text: string): boolean {
  return /\b(?:I(?:'ve| have)? (?:now |successfully |just )?(?:updated|changed|fixed|added|created|modified|edited|implemented|renamed|removed|replaced|refactored|rewrote|wrote|applied)|(?:has|have) been (?:updated|changed|fixed|added|created|modified|implemented|applied|renamed|removed)|successfully (?:updated|changed|fixed|added|created|modified|applied))\b|^\s*(?:all )?done\b/im.test(
    text,
  );
}

/** The failure text of the last write-tool call of the conversation, when it failed; null when it succeeded or there was none. */
function lastWriteFailure(messages: ModelMessage[]): { tool: string; text: string } | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "tool") continue;
    for (let k = m.content.length - 1; k >= 0; k--) {
      const part = m.content[k]!;
      if (part.type !== "tool-result" || !WRITE_TOOLS.has(part.toolName)) continue;
      return part.output.type === "error-text" ? { tool: part.toolName, text: part.output.value } : null;
    }
  }
  return null;
}

/**
 * Runs `runOnce` and looks at how each round ended; a round the model ended in a way
 * that leaves the work undone is followed by one more (a call found in its text run,
 * or a targeted nudge), each kind at most once, within the run's step limit. The
 * rounds are merged into one outcome.
 */
export async function runToTheEnd(
  runOnce: (messages: ModelMessage[], maxSteps: number) => Promise<SessionOutcome>,
  messages: ModelMessage[],
  deps: TurnEndDeps,
): Promise<SessionOutcome> {
  const acted = new Set<string>();
  let merged: SessionOutcome | null = null;
  let current = messages;
  let extraCalls = 0;
  for (;;) {
    const left = deps.maxSteps - (merged?.steps ?? 0);
    const outcome = await runOnce(current, left);
    merged = merge(merged, outcome);
    const next = merged.steps < deps.maxSteps ? await afterRound(outcome, deps, acted) : null;
    if (next === null) break;
    extraCalls += next.calls;
    if (next.final) {
      merged = { ...merged, messages: next.messages };
      break;
    }
    current = next.messages;
  }
  const total = { ...merged, toolCalls: merged.toolCalls + extraCalls };
  if (total.stopped === "step-limit" && total.note)
    total.note = total.note.replace(/limit of \d+ steps/, `limit of ${deps.maxSteps} steps`);
  return total;
}

/** What follows a round: the messages of the next one (and tool calls run here), or null when the run ends. */
async function afterRound(
  outcome: SessionOutcome,
  deps: TurnEndDeps,
  acted: Set<string>,
): Promise<{ messages: ModelMessage[]; calls: number; final?: boolean } | null> {
  const once = (kind: string) => !acted.has(kind) && acted.add(kind) !== undefined;
  const nudge = (kind: string, notice: string, text: string) => {
    if (!once(kind)) return null;
    deps.emit({ type: "notice", message: notice });
    return { messages: [...outcome.messages, { role: "user" as const, content: text }], calls: 0 };
  };
  if (outcome.stopped === "error") {
    if (!isContextLengthError(outcome.error) || !once("context")) return null;
    const stubbed = compactToolResults(outcome.messages, 0);
    const turns = compactTurns(stubbed.messages, deps.memory?.() ?? "");
    deps.emit({ type: "compacted", results: stubbed.results + turns.dropped, chars: stubbed.chars });
    deps.emit({
      type: "notice",
      message: `The provider refused the conversation as too long for the model's context (${outcome.error}); it was compacted and sent again.`,
    });
    return { messages: turns.messages, calls: 0 };
  }
  // Calls cut by the output-token limit are not run by the SDK: each gets the answer a cut call gets, never silence.
  if (outcome.stopped === "done" && outcome.finishReason === "length" && outcome.lastStepCalls > 0) {
    const answered = answerCutCalls(outcome.messages);
    if (answered === null) return null;
    deps.emit({
      type: "notice",
      message: "The model's tool call was cut off by its output-token limit; it was told to send a smaller change.",
    });
    return once("length-call") ? { messages: answered, calls: 0 } : null;
  }
  // A run stopped by its tool (plan's submit_plan), a loop, the limit or an abort ends as it is.
  if (outcome.stopped !== "done" || outcome.lastStepCalls > 0) return null;
  const text = outcome.text;

  const found = findTextToolCalls(text);
  if (found) {
    const ran = await runTextCalls(found, outcome.messages, deps);
    if (ran) return ran;
  }
  if (text.trim() === "") {
    const reasoningOnly = outcome.reasoning.trim() !== "";
    return nudge(
      "empty",
      `The model's reply was ${reasoningOnly ? "reasoning alone" : "empty"}; it was asked to go on.`,
      `Your last reply ${reasoningOnly ? "was reasoning alone: it had no answer and no tool call" : "was empty"}. Go on with the task: make the next change with a tool call, or, if the work is finished, say in words what you did.`,
    );
  }
  if (outcome.finishReason === "length") {
    return nudge(
      "length",
      `The model's reply was cut off by its output-token limit at ${text.length.toLocaleString("en-US")} characters; it was asked to continue in smaller pieces.`,
      `Your reply was cut off by the output-token limit at ${text.length.toLocaleString("en-US")} characters. Do not repeat it: continue from where it stopped, briefly, and make large changes as several smaller tool calls (a few dozen lines each).`,
    );
  }
  if (!deps.writes) return null;
  if (claimsSuccess(text)) {
    const failed = lastWriteFailure(outcome.messages);
    const staged = !deps.nothingStaged();
    if (failed || !staged) {
      const why = failed
        ? `your last ${failed.tool} call failed (${firstLine(failed.text)}), so that change was not staged`
        : "nothing is staged: no file was changed";
      return nudge(
        "claim",
        `The model said the work was done, but ${failed ? `its last ${failed.tool} call had failed` : "nothing was staged"}; it was told so.`,
        `You said the work is done, but ${why}. Make the change with the tools (read_file, then edit_file or write_file), or tell the user plainly that it is not done and why.`,
      );
    }
  }
  if (deps.nothingStaged() && looksLikeCodeInProse(text))
    return nudge(
      "code-in-prose",
      "The model gave code in its reply instead of staging it; it was asked to use the tools.",
      USE_TOOLS_NUDGE,
    );
  return null;
}

/**
 * Calls written as text, run through the run's own guarded tools (the seam judges
 * them as any call); the conversation then shows them as the calls they were, and
 * each run is noticed. A call that names no tool or has unusable arguments is answered
 * with the reason, asking for a real tool call. Null when the text holds no call worth answering.
 */
async function runTextCalls(
  found: NonNullable<ReturnType<typeof findTextToolCalls>>,
  messages: ModelMessage[],
  deps: TurnEndDeps,
): Promise<{ messages: ModelMessage[]; calls: number; final?: boolean } | null> {
  const names = Object.keys(deps.tools);
  const planned = found.calls.map((call, i) => {
    const input = call.input !== null && typeof call.input === "object" ? (call.input as Record<string, unknown>) : {};
    const editor = /^(?:functions\.)?str_?replace_(?:based_edit_tool|editor)$/i.test(call.name);
    const mapped = editor ? editorCommand(input, names) : null;
    const toolName = mapped?.toolName ?? resolveToolName(call.name, names);
    return {
      call,
      toolName,
      input: mapped?.input ?? call.input,
      id: `${TEXT_CALL_PREFIX}${Date.now().toString(36)}_${i}`,
    };
  });
  // JSON that merely has a "name" (a person, a package) is not a call unless it names a tool.
  if (!planned.some((p) => p.toolName !== null || p.call.explicit)) return null;
  const calls: { type: "tool-call"; toolCallId: string; toolName: string; input: unknown }[] = [];
  const results: ToolResultPart[] = [];
  for (const p of planned) {
    const toolName = p.toolName ?? p.call.name;
    const tool = p.toolName ? deps.tools[p.toolName] : undefined;
    let outcome: ToolOutcome;
    if (!tool?.execute) {
      outcome = {
        ok: false,
        text: `Error: your call arrived as text, and ${JSON.stringify(p.call.name)} is not a tool here (tools: ${names.join(", ")}). Send it as a tool call, not in your reply's text.`,
      };
    } else {
      const validated = await asSchema(tool.inputSchema).validate?.(p.input);
      const value = validated?.success ? validated.value : p.input;
      const reason = validated?.success ? invalidReason(value) : "its arguments do not fit the tool";
      if (reason !== null) {
        outcome = {
          ok: false,
          text: `Error: your call arrived as text and could not be run: ${reason} Send it as a tool call, not in your reply's text.`,
        };
      } else {
        deps.emit({
          type: "notice",
          message: `The model wrote its ${p.toolName} call as text; it was run as a tool call (same permission checks and review).`,
        });
        outcome = (await tool.execute(value, { toolCallId: p.id, messages, context: {} })) as ToolOutcome;
      }
    }
    calls.push({ type: "tool-call", toolCallId: p.id, toolName, input: p.input });
    results.push({ type: "tool-result", toolCallId: p.id, toolName, output: toModelOutput(outcome) });
  }
  // The reply is kept as what it meant: its prose, then the calls it wrote, then their results.
  const last = messages.at(-1);
  const before = last?.role === "assistant" ? messages.slice(0, -1) : messages;
  const content = [...(found.prose ? [{ type: "text" as const, text: found.prose }] : []), ...calls];
  return {
    messages: [...before, { role: "assistant", content }, { role: "tool", content: results }],
    calls: calls.length,
    final: deps.stopOnTool !== undefined && planned.some((p) => p.toolName === deps.stopOnTool),
  };
}

/**
 * The conversation with an answer for each call of the last reply that has none (the
 * reply was cut by the output-token limit, so the SDK ran none of them); null when
 * every call has its result.
 */
function answerCutCalls(messages: ModelMessage[]): ModelMessage[] | null {
  let at = messages.length - 1;
  while (at >= 0 && messages[at]!.role !== "assistant") at--;
  const reply = messages[at];
  if (!reply || reply.role !== "assistant" || typeof reply.content === "string") return null;
  const answered = new Set(
    messages
      .slice(at + 1)
      .flatMap((m) => (m.role === "tool" ? m.content.map((p) => ("toolCallId" in p ? p.toolCallId : "")) : [])),
  );
  const results: ToolResultPart[] = reply.content
    .filter((p) => p.type === "tool-call" && !answered.has(p.toolCallId))
    .map((p) => {
      const c = p as { toolCallId: string; toolName: string; input: unknown };
      const reason = invalidReason(c.input) ?? unreadableOf(c.input);
      const size = JSON.stringify(c.input ?? {}).length.toLocaleString("en-US");
      const text =
        reason && /cut off/.test(reason)
          ? `Error: ${reason}`
          : `Error: ${c.toolName}: your arguments were cut off at about ${size} characters by the output-token limit; nothing was done. Send a smaller change: split it into several calls of a few dozen lines each.`;
      return {
        type: "tool-result",
        toolCallId: c.toolCallId,
        toolName: c.toolName,
        output: { type: "error-text", value: text },
      };
    });
  if (results.length === 0) return null;
  return [...messages, { role: "tool", content: results }];
}

function unreadableOf(input: unknown): string | null {
  if (input === null || typeof input !== "object") return null;
  const v = (input as Record<string, unknown>)[UNREADABLE_CALL];
  return typeof v === "string" ? v : null;
}

function merge(a: SessionOutcome | null, b: SessionOutcome): SessionOutcome {
  if (!a) return b;
  return {
    ...b,
    usage: {
      inputTokens: a.usage.inputTokens + b.usage.inputTokens,
      outputTokens: a.usage.outputTokens + b.usage.outputTokens,
    },
    steps: a.steps + b.steps,
    toolCalls: a.toolCalls + b.toolCalls,
    models: [...new Set([...a.models, ...b.models])],
  };
}

function firstLine(text: string): string {
  const line = text.replace(/^Error:\s*/, "").split("\n")[0]!;
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
