import { compact, formatContext, type SessionEvent } from "../../agent/events.ts";
import { forPerson } from "../../render/person-text.ts";
import { visible, visibleLines } from "../../render/visible-text.ts";
import type { CliIO } from "./io.ts";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** Totals shown in the closing line of a run. */
export interface RunTotals {
  turns: number;
  calls: number;
  inputTokens: number;
  outputTokens: number;
}

/**
 * Renders session events as terminal progress: a spinner while the model thinks
 * (terminals only), the model's text as it streams, a line per tool call with its
 * duration, the context meter after each step, and a closing line.
 */
export class ProgressView {
  private spinner: ReturnType<typeof setInterval> | null = null;
  private frame = 0;
  private status = "";
  private textOpen = false;
  private readonly started = performance.now();
  readonly totals: RunTotals = { turns: 0, calls: 0, inputTokens: 0, outputTokens: 0 };
  private readonly callInput = new Map<string, unknown>();
  /** Calls a rule refused: their ⊘ line said it, so their failed result adds nothing for the person. */
  private readonly refused = new Set<string>();

  /** `streamText: false` keeps the model's text for the caller to render (ask's Markdown answer). */
  constructor(
    private readonly io: CliIO,
    private readonly options: { streamText?: boolean } = {},
  ) {}

  /** Where progress goes: the screen, or stderr when stdout is reserved for a JSON document. */
  private readonly write = (text: string): void => (this.io.machine ? this.io.err(text) : this.io.out(text));

  /** The event sink to hand to a run. */
  readonly sink = (event: SessionEvent): void => {
    const c = this.io.colors;
    switch (event.type) {
      case "step-start":
        this.totals.turns += 1;
        this.startSpinner("thinking");
        break;
      case "text":
        if (this.options.streamText === false) break;
        this.stopSpinner();
        this.textOpen = true;
        this.write(visibleLines(event.delta));
        break;
      case "tool-call":
        this.closeText();
        this.totals.calls += 1;
        this.callInput.set(event.callId, event.input);
        this.startSpinner(`${event.tool} ${describeInput(event.input)}`);
        break;
      case "tool-result": {
        this.stopSpinner();
        this.closeText();
        if (this.refused.delete(event.callId)) break;
        const mark = event.ok ? c.green("✓") : c.red("✗");
        const subject = describeInput(this.callInput.get(event.callId));
        const detail = event.ok ? firstLine(event.output) : c.red(firstLine(forPerson(event.output)));
        this.write(`  ${mark} ${c.bold(event.tool)} ${subject} ${c.dim(`${Math.round(event.ms)}ms`)}${detail && (!event.ok || event.output.startsWith("Staged")) ? ` — ${detail}` : ""}\n`);
        break;
      }
      case "policy":
        if (event.decision === "deny" && event.answeredBy === "rule") {
          this.stopSpinner();
          this.refused.add(event.callId);
          this.write(`  ${c.yellow("⊘")} ${event.access} ${visible(event.path)} denied: ${firstLine(forPerson(event.reason))}\n`);
        }
        break;
      case "step-end":
        this.stopSpinner();
        this.closeText();
        this.totals.inputTokens += event.usage.inputTokens;
        this.totals.outputTokens += event.usage.outputTokens;
        this.write(c.dim(`  · ${formatContext(event.context)} · ${event.model}\n`));
        break;
      case "compacted":
        this.write(c.dim(`  · compacted ${event.results} old tool results (${compact(event.chars)} chars) to stay within the context window\n`));
        break;
      case "model-fallback":
        this.stopSpinner();
        this.write(c.yellow(`  ↪ ${event.from} failed (${event.reason}); continuing with ${event.to}\n`));
        break;
      case "error":
        // Not printed here: the command that started the run reports its failure, once.
        this.stopSpinner();
        this.closeText();
        break;
    }
  };

  /** Pauses the spinner so a question can be asked cleanly. */
  pause(): void {
    this.stopSpinner();
    this.closeText();
  }

  /** `turns 4 · calls 9 · tokens 3.1k in / 420 out · 5.2s`, or nothing when nothing was used. */
  closingLine(): string {
    this.stopSpinner();
    this.closeText();
    const t = this.totals;
    // A run that failed before the model said anything has no totals worth a line.
    if (t.calls === 0 && t.inputTokens === 0 && t.outputTokens === 0) return "";
    const secs = ((performance.now() - this.started) / 1000).toFixed(1);
    return this.io.colors.dim(`turns ${t.turns} · calls ${t.calls} · tokens ${compact(t.inputTokens)} in / ${compact(t.outputTokens)} out · ${secs}s\n`);
  }

  private startSpinner(label: string): void {
    this.status = label;
    if (!this.io.interactive || this.spinner) return;
    this.spinner = setInterval(() => {
      this.frame = (this.frame + 1) % SPINNER.length;
      this.write(`\r\x1b[2K${this.io.colors.cyan(SPINNER[this.frame]!)} ${this.status}`);
    }, 80);
  }

  private stopSpinner(): void {
    if (!this.spinner) return;
    clearInterval(this.spinner);
    this.spinner = null;
    this.write("\r\x1b[2K");
  }

  private closeText(): void {
    if (!this.textOpen) return;
    this.textOpen = false;
    this.write("\n");
  }
}

/** A short description of a tool input for one progress line: its path, pattern, url or command. */
function describeInput(input: unknown): string {
  if (!input || typeof input !== "object") return "";
  const o = input as Record<string, unknown>;
  for (const key of ["path", "pattern", "url", "query", "command"]) {
    const value = Object.hasOwn(o, key) ? o[key] : undefined;
    if (typeof value === "string") return truncate(value, 60);
  }
  return "";
}

function firstLine(text: string): string {
  return truncate(text.split("\n", 1)[0] ?? "", 120);
}

function truncate(text: string, n: number): string {
  // Tool inputs come from the model: strip control characters before they reach the terminal.
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
  return clean.length > n ? `${clean.slice(0, n - 1)}…` : clean;
}
