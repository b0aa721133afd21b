// Two ways small models stall: they answer with code in prose instead of
// calling a tool, or they repeat a failing call unchanged. Each gets one short
// nudge; neither changes what a tool does or what the owner reviews.

import type { ModelMessage } from "ai";
import { sha256 } from "../core/hash.ts";
import type { SessionOutcome } from "./session.ts";

/** The message a run gets when the model stopped with code in its reply and nothing staged. */
export const USE_TOOLS_NUDGE =
  "Your reply contains code, but nothing was changed: code in a reply is not applied. Use the tools to make the change (read_file, then edit_file or create_file), or say plainly why no change is needed.";

const FAILURES_BEFORE_NUDGE = 3;

/** True when a finished run looks like code given in prose instead of staged: a fenced block or several code-like lines. */
export function looksLikeCodeInProse(text: string): boolean {
  if (/```[\s\S]*?\n[\s\S]*?```/.test(text)) return true;
  const codeLines = text
    .split("\n")
    .filter((l) =>
      /^\s*(?:(?:export |async )?function |def |class |const |let |var |import |return |if \(|for \(|#include|public |private |fn |package )|[;{}]\s*$/.test(
        l,
      ),
    );
  return codeLines.length >= 3;
}

/**
 * Runs `runOnce`; when the model stopped with code in prose and nothing is staged,
 * adds one nudge and runs once more, so the run ends with the change staged or a
 * plain explanation. The outcomes are merged as one run.
 */
export async function runWithNudge(
  runOnce: (messages: ModelMessage[]) => Promise<SessionOutcome>,
  messages: ModelMessage[],
  nothingStaged: () => boolean,
): Promise<SessionOutcome> {
  const first = await runOnce(messages);
  if (first.stopped !== "done" || !nothingStaged() || !looksLikeCodeInProse(first.text)) return first;
  const second = await runOnce([...first.messages, { role: "user", content: USE_TOOLS_NUDGE }]);
  return {
    ...second,
    usage: {
      inputTokens: first.usage.inputTokens + second.usage.inputTokens,
      outputTokens: first.usage.outputTokens + second.usage.outputTokens,
    },
    steps: first.steps + second.steps,
    toolCalls: first.toolCalls + second.toolCalls,
    models: [...new Set([...first.models, ...second.models])],
  };
}

/** Counts failing calls by tool and exact input; the third identical failure is told to change approach. */
export class RepeatedFailures {
  private readonly counts = new Map<string, number>();

  /** The tool answer to give: `output` unchanged, or with a nudge appended on the third identical failure. */
  answer(tool: string, input: unknown, ok: boolean, output: string): string {
    if (ok) return output;
    // Hashed: a failing call can carry megabytes of arguments.
    const key = sha256(`${tool}\0${stableJson(input)}`);
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    if (n !== FAILURES_BEFORE_NUDGE) return output;
    return `${output}\nThis exact ${tool} call has now failed ${n} times. Repeating it will fail again: change approach (read the file again, search for the text, use different arguments or another tool), or tell the user what blocks you.`;
  }
}

function stableJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v: unknown) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
        : v,
    );
  } catch {
    return String(value);
  }
}
