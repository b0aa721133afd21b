import pc from "picocolors";
import { failureWindow } from "../core/failure-window.ts";
import { visible } from "./visible-text.ts";

/** What a run_command result says, read back from the text the model was given. */
export interface CommandReport {
  command: string;
  /** How it ended: its exit code, a time-out, a cancel, or a signal. */
  end: "exit" | "timeout" | "cancelled" | "signal";
  exitCode: number | null;
  signal: string | null;
  /** The command's own run time (not the time anyone spent answering a question). */
  seconds: number;
  /** Its output lines (the part that was kept, when the output was long). */
  output: string[];
  /** Set when the start of the output was cut before the model saw it, e.g. "the last 64.0 KB of 1.2 MB". */
  cut: string | null;
  /** The lines around the first failure when they were in the cut start (else empty). */
  firstFailure: string[];
  /** What followed the output: staged files, notes, warnings. */
  after: string[];
}

const ENDING = /^(?:Exit code (-?\d+)|(Timed out)|(Cancelled)|Killed by signal (\S+)) after ([\d.]+) s\b/;
// Lines the tool appends after the output (staging, notes, warnings), read from the end.
const AFTER =
  /^(Staged (create|edit|delete): |Not staged: |No file changes\.$|…and \d+ more |Note: |WARNING: |Its file effects were discarded|git metadata is not available|Tell the user; | {2}(add|change|delete|create|modify)\w*: )/;

/** Reads a run_command result; null when it is not one (a refusal, or an error before the command ran). */
export function parseCommandReport(text: string): CommandReport | null {
  const lines = text.split("\n");
  if (!lines[0]?.startsWith("$ ")) return null;
  const ending = ENDING.exec(lines[1] ?? "");
  if (!ending) return null;
  const end = ending[1] !== undefined ? "exit" : ending[2] ? "timeout" : ending[3] ? "cancelled" : "signal";
  let rest = lines.slice(2);
  // The lines around a first failure that was cut from the output come before it.
  let firstFailure: string[] = [];
  if (rest[0]?.startsWith("First failure, ")) {
    const header = rest.findIndex((l) => l.startsWith("Output ("));
    if (header !== -1) {
      firstFailure = rest.slice(1, header);
      rest = rest.slice(header);
    }
  }
  let cut: string | null = null;
  let output: string[] = [];
  let after: string[];
  const header = rest[0] ?? "";
  if (header === "Output: (none)") {
    after = rest.slice(1);
  } else if (header === "Output:" || header.startsWith("Output (")) {
    if (header.startsWith("Output (")) cut = /^Output \(([^;]*)/.exec(header)?.[1] ?? null;
    const body = rest.slice(1);
    let split = body.length;
    while (split > 0 && AFTER.test(body[split - 1]!)) split--;
    output = body.slice(0, split);
    after = body.slice(split);
  } else {
    after = rest;
  }
  return {
    command: lines[0].slice(2),
    end,
    exitCode: ending[1] !== undefined ? Number(ending[1]) : null,
    signal: ending[4] ?? null,
    seconds: Number(ending[5]),
    output,
    cut,
    firstFailure,
    after,
  };
}

/** How to show a command's result. */
export interface CommandViewOptions {
  color: boolean;
  /** Every output line instead of the first and last ones. */
  verbose?: boolean;
  /** Output lines shown from the start and from the end when collapsed (default 3 each). */
  head?: number;
  tail?: number;
  /** Whether the whole output is in the run's log (named in the closing line). */
  logPath?: string;
}

/**
 * The command as a person should see it: `✓`/`✗`, the command, its exit status (red
 * unless 0) and its own duration; then its output, the first and last lines when long
 * (with where to read the rest); then what it staged.
 */
export function formatCommandReport(r: CommandReport, options: CommandViewOptions): string {
  const c = pc.createColors(options.color);
  const ok = r.end === "exit" && r.exitCode === 0;
  const status =
    r.end === "exit"
      ? `exit ${r.exitCode}`
      : r.end === "timeout"
        ? "timed out"
        : r.end === "cancelled"
          ? "cancelled"
          : `killed by ${r.signal}`;
  const mark = ok ? c.green("✓") : c.red("✗");
  const lines = [
    `  ${mark} ${c.bold(`$ ${visible(r.command)}`)}  ${ok ? c.green(status) : c.red(c.bold(status))} ${c.dim(`· ${formatSeconds(r.seconds)}`)}`,
  ];
  const gutter = c.dim("  │ ");
  const head = options.head ?? 3;
  const tail = options.tail ?? 3;
  const out = r.output;
  if (r.firstFailure.length > 0) {
    lines.push(`${gutter}${c.dim("(the first failure, from the start of the output)")}`);
    for (const line of r.firstFailure) lines.push(gutter + visible(line));
    lines.push(`${gutter}${c.dim(`(${r.cut ?? "the end of the output"})`)}`);
  } else if (r.cut && options.verbose) lines.push(`${gutter}${c.dim(`(${r.cut}; the start was cut)`)}`);
  if (options.verbose || out.length <= head + tail + 1) {
    for (const line of out) lines.push(gutter + visible(line));
  } else {
    const where = options.logPath ? "--verbose, or the run's log" : "--verbose";
    // A failure's own lines (an assertion, a compiler error) sit between a banner and the totals: show them too.
    const window = ok || r.firstFailure.length > 0 ? null : failureWindow(out);
    let shown = 0;
    for (const [start, end] of shownRanges(out.length, head, tail, window)) {
      if (start > shown) lines.push(`${gutter}${c.dim(`… ${start - shown} more lines (${where})`)}`);
      for (const line of out.slice(start, end)) lines.push(gutter + visible(line));
      shown = end;
    }
  }
  for (const line of r.after) if (line !== "No file changes.") lines.push(`  ${c.dim("·")} ${visible(line)}`);
  return lines.join("\n") + "\n";
}

/** The line ranges [start, end) to show of `n` lines: the head, the failure's window, the tail, merged where they meet. */
function shownRanges(
  n: number,
  head: number,
  tail: number,
  window: { start: number; end: number } | null,
): [number, number][] {
  const ranges: [number, number][] = [[0, head]];
  if (window) ranges.push([window.start, window.end]);
  ranges.push([n - tail, n]);
  const merged: [number, number][] = [];
  for (const [start, end] of ranges.sort((a, b) => a[0] - b[0])) {
    const last = merged.at(-1);
    // Ranges one line apart are joined: "… 1 more line" would take the line's own room.
    if (last && start <= last[1] + 1) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

function formatSeconds(s: number): string {
  return s < 10 ? `${s.toFixed(2)}s` : `${s.toFixed(1)}s`;
}
