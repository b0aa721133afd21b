import type { AgentRun } from "../../app/agent-run.ts";
import { escapeHtml } from "./html.ts";

/** A tool input in a few words: its path, pattern, command, URL or query. */
export function describeInput(input: unknown): string {
  if (!input || typeof input !== "object") return "";
  const i = input as Record<string, unknown>;
  const subject = i.path ?? i.pattern ?? i.command ?? i.url ?? i.query ?? "";
  const text = typeof subject === "string" ? subject : JSON.stringify(subject);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

/** The closing line of a run, in HTML: how it ended, time, steps, tool calls, files staged, models. */
export function summaryLine(run: AgentRun, ms: number): string {
  const o = run.outcome;
  const seconds = `${(ms / 1000).toFixed(1)} s`;
  if (!o) return `⚠️ The run produced no outcome (${seconds}).`;
  const head =
    o.stopped === "done"
      ? "✅ Done"
      : o.stopped === "aborted"
        ? "⏹ Cancelled"
        : o.stopped === "step-limit"
          ? "⚠️ Stopped at the step limit"
          : o.stopped === "loop"
            ? "⚠️ Stopped: the model was repeating itself"
            : "⚠️ Failed";
  const files = run.changeset ? run.changeset.files.length : 0;
  const parts = [
    seconds,
    `${o.steps} ${o.steps === 1 ? "step" : "steps"}`,
    `${o.toolCalls} tool ${o.toolCalls === 1 ? "call" : "calls"}`,
    ...(run.mode === "agent" ? [`${files} ${files === 1 ? "file" : "files"} staged`] : []),
    ...(o.models.length ? [o.models.join(", ")] : []),
  ];
  const error = o.error
    ? `\n${escapeHtml(o.error.slice(0, 500))}`
    : o.note
      ? `\n${escapeHtml(o.note.slice(0, 500))}`
      : "";
  return `<b>${head}</b> · ${escapeHtml(parts.join(" · "))}${error}`;
}
