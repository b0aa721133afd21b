// Ways small models stall: they answer with code in prose instead of calling a
// tool, or they repeat a call unchanged (failing, or already done). Each gets a
// short note; none changes what a tool does or what the owner reviews.

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

// Identical successful calls with identical results: the third is answered "already done", the fifth stops the run.
const REPEATS_BEFORE_DONE = 3;
const REPEATS_BEFORE_STOP = 5;
// Identical failures: past the nudge, the sixth stops the run.
const FAILURES_BEFORE_STOP = 6;
/** Tools whose identical call stages the very same content again: a repeat whatever the answer's counts say. */
const WRITES = new Set(["write_file", "create_file", "edit_file", "delete_file", "apply_patch"]);
/** Tool results kept verbatim by compaction: a repeat within this many calls can be answered without its output. */
const RECENT_CALLS = 4;

/**
 * Watches the calls of a run for loops: the same call repeated with the same
 * result, or the same failing call again and again. A loop is answered with what
 * the model needs to move on and, if it goes on, stops the run (`stopReason`).
 */
export class RepeatedCalls {
  private readonly counts = new Map<string, { n: number; output: string; at: number }>();
  private calls = 0;
  /** Why the run must stop now, or null while it may go on. */
  stopReason: string | null = null;

  /** The tool answer to give: `output` unchanged, or with a note on a repeat (and the run told to stop past the limit). */
  answer(tool: string, input: unknown, ok: boolean, output: string): string {
    this.calls += 1;
    // Hashed: a call can carry megabytes of arguments.
    const key = sha256(`${ok ? "ok" : "failed"}\0${tool}\0${stableJson(input)}`);
    const outputHash = sha256(output);
    const seen = this.counts.get(key);
    // A failure, or the same write again, counts as a repeat whatever it said; a read only when its result is the same.
    const n = seen && (!ok || WRITES.has(tool) || seen.output === outputHash) ? seen.n + 1 : 1;
    const recent = seen !== undefined && this.calls - seen.at <= RECENT_CALLS;
    this.counts.set(key, { n, output: outputHash, at: this.calls });
    if (!ok) {
      if (n >= FAILURES_BEFORE_STOP && this.stopReason === null)
        this.stopReason = `The run was stopped: the model sent the same failing ${tool} call ${n} times. What it staged before is kept for review.`;
      if (n !== FAILURES_BEFORE_NUDGE) return output;
      return `${output}\nThis exact ${tool} call has now failed ${n} times. Repeating it will fail again: change approach (read the file again, search for the text, use different arguments or another tool), or tell the user what blocks you.`;
    }
    if (n < REPEATS_BEFORE_DONE) return output;
    if (n >= REPEATS_BEFORE_STOP && this.stopReason === null)
      this.stopReason = `The run was stopped: the model repeated the same ${tool} call ${n} times, each with the same result, and made no progress. What it staged is kept for review.`;
    const note = `Already done; unchanged since your last call: this exact ${tool} call has returned the same result ${n} times. Do not repeat it: use that result and take the next step, or tell the user what blocks you.${n >= REPEATS_BEFORE_STOP - 1 ? " Repeating it once more ends the run." : ""}`;
    // The earlier result is still in the conversation verbatim when it was recent; otherwise it is given again.
    return recent ? note : `${note}\n${output}`;
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
