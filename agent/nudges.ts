// Two ways small models stall: they answer with code in prose instead of
// calling a tool, or they repeat a failing call unchanged. Each gets one short
// nudge; neither changes what a tool does or what the owner reviews.

import { sha256 } from "../core/hash.ts";

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
