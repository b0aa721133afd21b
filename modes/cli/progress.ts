import { costOf, formatDollars, type Price, RunMeter, type UsageByModel } from "../../app/run-cost.ts";
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { compact, formatContext, type ContextMeter, type SessionEvent } from "../../agent/events.ts";
import { formatCommandReport, parseCommandReport } from "../../render/command-result.ts";
import { forPerson } from "../../render/person-text.ts";
import { visible } from "../../render/visible-text.ts";
import { wrapText } from "../../render/wrap.ts";
import type { CliIO } from "./io.ts";
import { renderMarkdown } from "./markdown.ts";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** Turns and tool calls shown in the closing line of a run (its tokens come from the run's meter). */
export interface RunTotals {
  turns: number;
  calls: number;
}

/** How a ProgressView shows a run. */
export interface ProgressOptions {
  /** False keeps the model's text for the caller to render (ask's Markdown answer, plan's plan). */
  streamText?: boolean;
  /** Where every tool call's whole output is appended; named where output is collapsed. */
  logPath?: string;
}

/**
 * Renders session events as terminal progress: a spinner with elapsed seconds while
 * the model works (terminals only), the model's text as Markdown once each block is
 * complete, a line per tool call (commands with exit status, own duration and their
 * output's first and last lines), a context line when it changes meaningfully, and a
 * closing line. Everything is wrapped to the terminal's width.
 */
export class ProgressView {
  private spinner: ReturnType<typeof setInterval> | null = null;
  private frame = 0;
  private status = "";
  /** What the spinner waits on (`model:STEP`, `call:ID`) and since when: its seconds are that wait's own. */
  private waitKey = "";
  private waitSince = performance.now();
  /** The model at work, named on the spinner (the chain's first, then whichever answered or took over). */
  private model = "";
  private step = 0;
  private readonly started = performance.now();
  readonly totals: RunTotals = { turns: 0, calls: 0 };
  /** This turn's tokens per model, for its cost. */
  private readonly meter = new RunMeter();
  private readonly callInput = new Map<string, unknown>();
  /** Calls a rule refused: their ⊘ line said it, so their failed result adds nothing for the person. */
  private readonly refused = new Set<string>();
  /** Model text not yet shown: it is rendered as Markdown a whole block at a time. */
  private pending = "";
  private lastContext: { model: string; bucket: number } | null = null;
  /** Time spent waiting for the person's answer, per call, so a tool's time is its own. */
  private readonly waited = new Map<string, number>();
  private pausedAt: number | null = null;
  private logReady = false;

  constructor(
    private readonly io: CliIO,
    private readonly options: ProgressOptions = {},
  ) {}

  /** The run's log file, when it has one (every tool output in full). */
  get logPath(): string | undefined {
    return this.options.logPath;
  }

  /** Where progress goes: the screen, or stderr when stdout is reserved for a JSON document. */
  private readonly write = (text: string): void => (this.io.machine ? this.io.err(text) : this.io.out(text));

  private get width(): number {
    return Math.max(20, this.io.columns);
  }

  /** One or more lines, wrapped to the terminal, continuation lines indented under the text. */
  private line(text: string, indent = "    "): void {
    this.write(`${wrapText(text, this.width, indent)}\n`);
  }

  /** `pencil agent · groq:… → openrouter:… · ~/code/app`, printed before the first request. */
  header(mode: string, models: string[], workspace: string, home?: string): void {
    const c = this.io.colors;
    const where =
      home && (workspace === home || workspace.startsWith(`${home}/`)) ? `~${workspace.slice(home.length)}` : workspace;
    this.line(
      `${c.bold(`pencil ${mode}`)} ${c.dim("·")} ${c.cyan(models.map(visible).join(" → ") || "no model")} ${c.dim("·")} ${visible(where)}`,
    );
    this.model = models[0] ?? "";
    this.startSpinner(`waiting for ${this.model ? visible(this.model) : "the model"}`, "model:0");
  }

  /** `groq:… is thinking`: the spinner's words for the model at work. */
  private modelDoing(what: string): string {
    return `${this.model ? visible(this.model) : "the model"} is ${what}`;
  }

  /** The event sink to hand to a run. */
  readonly sink = (event: SessionEvent): void => {
    const c = this.io.colors;
    this.meter.sink(event);
    switch (event.type) {
      case "model-request":
        this.step = event.step;
        this.startSpinner(`waiting for ${this.model ? visible(this.model) : "the model"}`, `model:${this.step}`);
        break;
      case "step-start":
        this.totals.turns += 1;
        this.step = event.step;
        this.startSpinner(this.modelDoing("thinking"), `model:${this.step}`);
        break;
      case "text":
        if (this.options.streamText === false) break;
        this.pending += event.delta;
        this.flushBlocks(false);
        if (this.pending) this.startSpinner(this.modelDoing("writing"), `model:${this.step}`);
        break;
      case "thinking":
        // Reasoning is not the answer: the spinner says the model is thinking; its text is not printed as a reply.
        this.startSpinner(this.modelDoing("thinking"), `model:${this.step}`);
        break;
      case "tool-call":
        this.flushBlocks(true);
        this.totals.calls += 1;
        this.callInput.set(event.callId, event.input);
        // A command names itself and counts its own seconds: a long test run shows what runs and for how long.
        this.startSpinner(
          event.tool === "run_command"
            ? `running ${describeInput(event.input)}`
            : `${event.tool} ${describeInput(event.input)}`,
          `call:${event.callId}`,
        );
        break;
      case "tool-result": {
        this.stopSpinner();
        this.flushBlocks(true);
        this.log(event);
        if (this.refused.delete(event.callId)) break;
        if (event.tool === "run_command") {
          const report = parseCommandReport(event.output);
          if (report) {
            const text = formatCommandReport(report, {
              color: this.io.color,
              verbose: this.io.verbose === true,
              ...(this.options.logPath ? { logPath: this.options.logPath } : {}),
            });
            this.write(`${wrapText(text.replace(/\n$/, ""), this.width, "  │   ")}\n`);
            break;
          }
        }
        const mark = event.ok ? c.green("✓") : c.red("✗");
        const subject = describeInput(this.callInput.get(event.callId));
        const ms = Math.max(0, event.ms - (this.waited.get(event.callId) ?? 0));
        this.waited.delete(event.callId);
        const detail = event.ok ? firstLine(event.output) : c.red(firstLine(forPerson(event.output)));
        this.line(
          `  ${mark} ${c.bold(event.tool)} ${subject} ${c.dim(`${Math.round(ms)}ms`)}${detail && (!event.ok || event.output.startsWith("Staged")) ? ` — ${detail}` : ""}`,
        );
        break;
      }
      case "policy":
        if (event.answeredBy === "user" && this.pausedAt !== null) {
          this.waited.set(event.callId, (this.waited.get(event.callId) ?? 0) + performance.now() - this.pausedAt);
          this.pausedAt = null;
        }
        if (event.decision === "deny" && event.answeredBy === "rule") {
          this.stopSpinner();
          this.refused.add(event.callId);
          this.line(
            `  ${c.yellow("⊘")} ${event.access} ${visible(event.path)} denied: ${firstLine(forPerson(event.reason))}`,
          );
        }
        break;
      case "step-end":
        this.stopSpinner();
        this.flushBlocks(true);
        this.model = event.model || this.model;
        if (this.contextChanged(event.model, event.context))
          this.line(c.dim(`  · ${formatContext(event.context)} · ${event.model}`));
        break;
      case "compacted":
        this.line(
          c.dim(
            `  · compacted ${event.results} old tool results (${compact(event.chars)} chars) to stay within the context window`,
          ),
        );
        break;
      case "model-fallback":
        this.stopSpinner();
        this.line(c.yellow(`  ↪ ${event.from} failed (${event.reason}); continuing with ${event.to}`));
        this.model = event.to;
        break;
      case "notice":
        this.stopSpinner();
        this.line(c.yellow(`  ! ${visible(event.message)}`));
        break;
      case "error":
        // Not printed here: the command that started the run reports its failure, once.
        this.stopSpinner();
        this.flushBlocks(true);
        break;
    }
  };

  /** Pauses the spinner so a question can be asked cleanly; the wait is not counted in the tool's time. */
  pause(): void {
    this.stopSpinner();
    this.flushBlocks(true);
    this.pausedAt = performance.now();
  }

  /**
   * `turns 4 · calls 9 · tokens 3.1k in / 420 out · $0.0012 (session $0.0040) · 5.2s`, or nothing when nothing
   * was used; the cost where every model has a price (the owner's table or the provider's report; local is free).
   */
  closingLine(session?: { usage: UsageByModel; prices: Record<string, Price> }): string {
    this.stopSpinner();
    this.flushBlocks(true);
    const t = this.totals;
    // The intent check's model call counts here as its cost does: the meter has every step's tokens and it.
    const used = Object.values(this.meter.usage);
    const inputTokens = used.reduce((n, u) => n + u.inputTokens, 0);
    const outputTokens = used.reduce((n, u) => n + u.outputTokens, 0);
    // A run that failed before the model said anything has no totals worth a line.
    if (t.calls === 0 && inputTokens === 0 && outputTokens === 0) return "";
    const secs = ((performance.now() - this.started) / 1000).toFixed(1);
    // The log's path on a line of its own, never cut or indented, so it can be copied whole.
    const log =
      this.logReady && this.options.logPath
        ? `${this.io.colors.dim("run's log (every output in full):")}\n${this.options.logPath}\n`
        : "";
    const prices = session?.prices ?? {};
    const turnCost = costOf(this.meter.usage, prices);
    const sessionCost = session ? costOf(session.usage, prices) : null;
    const cost =
      turnCost === null
        ? " · cost: no price set (telegram.prices in settings)"
        : ` · ${formatDollars(turnCost)}${sessionCost !== null && sessionCost !== turnCost ? ` (session ${formatDollars(sessionCost)})` : ""}`;
    return `${this.io.colors.dim(wrapText(`turns ${t.turns} · calls ${t.calls} · tokens ${compact(inputTokens)} in / ${compact(outputTokens)} out${Object.keys(this.meter.usage).length ? cost : ""} · ${secs}s`, this.width, "  "))}\n${log}`;
  }

  /** The context line is worth a line when the model changed or the meter moved by a tenth of the window. */
  private contextChanged(model: string, meter: ContextMeter): boolean {
    const bucket = meter.window > 0 ? Math.floor((meter.used / meter.window) * 10) : 0;
    const last = this.lastContext;
    this.lastContext = { model, bucket };
    return !last || last.model !== model || last.bucket !== bucket;
  }

  /** Shows the complete Markdown blocks of the pending text (all of it when `all`). */
  private flushBlocks(all: boolean): void {
    if (!this.pending) return;
    const cut = all ? this.pending.length : lastBlockEnd(this.pending);
    if (cut <= 0) return;
    const block = this.pending.slice(0, cut);
    this.pending = this.pending.slice(cut);
    if (block.trim() === "") return;
    this.stopSpinner();
    const rendered = renderMarkdown(this.io, block).replace(/\n+$/, "");
    this.write(`${rendered}\n`);
  }

  private log(event: Extract<SessionEvent, { type: "tool-result" }>): void {
    const path = this.options.logPath;
    if (!path) return;
    try {
      if (!this.logReady) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      const input = this.callInput.get(event.callId);
      appendFileSync(
        path,
        `## ${event.tool} ${JSON.stringify(input ?? {})} (${event.ok ? "ok" : "failed"}, ${Math.round(event.ms)} ms)\n${event.output}\n\n`,
        { mode: 0o600 },
      );
      this.logReady = true;
    } catch {
      // A log that cannot be written costs the full output on disk, not the run.
    }
  }

  private startSpinner(label: string, key: string): void {
    this.status = label;
    if (key !== this.waitKey) {
      this.waitKey = key;
      this.waitSince = performance.now();
    }
    if (!this.io.interactive || this.io.machine || this.spinner) return;
    const draw = () => {
      this.frame = (this.frame + 1) % SPINNER.length;
      const secs = Math.floor((performance.now() - this.waitSince) / 1000);
      const text = `${SPINNER[this.frame]} ${this.status} · ${secs}s · Ctrl-C to stop`;
      const shown = [...text].length > this.width - 1 ? `${[...text].slice(0, this.width - 2).join("")}…` : text;
      this.write(`\r\x1b[2K${this.io.colors.cyan(shown)}`);
    };
    draw();
    this.spinner = setInterval(draw, 80);
  }

  private stopSpinner(): void {
    if (!this.spinner) return;
    clearInterval(this.spinner);
    this.spinner = null;
    this.write("\r\x1b[2K");
  }
}

/**
 * Where the complete Markdown blocks of streamed text end: after the last blank line
 * outside a code fence (0 when no block is complete yet).
 */
function lastBlockEnd(text: string): number {
  let end = 0;
  let fence = false;
  let offset = 0;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i]!;
    offset += line.length + 1;
    if (/^\s*(```|~~~)/.test(line)) {
      fence = !fence;
      if (!fence) end = offset; // a closed fence is a complete block
      continue;
    }
    if (!fence && line.trim() === "") end = offset;
  }
  return end;
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
