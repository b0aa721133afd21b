import { costOf, readPrices } from "../../app/run-cost.ts";
import { answerModelCommand } from "../../app/model-switch.ts";
import type { CommandRecord } from "../../core/staging/command-record.ts";
import { nobodyApprover } from "../../core/policy/approver.ts";
import type { RunMode } from "../../agent/prompts.ts";
import { join } from "node:path";
import { AgentRun, type RunOptions } from "../../app/agent-run.ts";
import { chooseModels } from "../../app/model-choice.ts";
import type { RunHooks } from "../../app/run-turn.ts";
import type { Runtime } from "../../app/runtime.ts";
import { formatSummary, summarizeChangeset } from "../../render/summary.ts";
import { hint, type CliIO } from "./io.ts";
import { describeInstructions, instructionsFor } from "../../app/project-instructions.ts";
import { visible } from "../../render/visible-text.ts";
import { ProgressView } from "./progress.ts";
import { reviewLoop, type ReviewOptions } from "./review-flow.ts";
import { terminalApprover } from "./terminal-approver.ts";
import { endTrackedProcesses } from "../../core/sandbox/live-processes.ts";
import { onStop } from "../../app/stop-on-signal.ts";

/**
 * A run with terminal progress, a new one or the next turn of `existing` (a
 * follow-up). Ctrl-C, the same at every point of a run: the first stops the model
 * and keeps what is staged; the second saves the staged work as a pending
 * changeset and exits 3.
 */
export async function runWithProgress(
  io: CliIO,
  runtime: Runtime,
  mode: RunMode,
  goal: string,
  options: RunOptions = {},
  view = new ProgressView(io, { logPath: runLogPath(runtime) }),
  existing: AgentRun | null = null,
): Promise<{ run: AgentRun; hooks: RunHooks }> {
  // Built here, so the header can name the model before the first request goes out (and a missing key creates no session).
  const models = existing ? null : (options.models ?? chooseModels(runtime, { emit: (event) => view.sink(event) }));
  const run = existing ?? AgentRun.open(runtime, mode, goal, { ...options, ...(models ? { models } : {}) });
  const controller = new AbortController();
  const onInterrupt = () => {
    if (controller.signal.aborted) {
      view.pause();
      // Nothing the run started outlives the quit: its command's namespace and its MCP servers end first.
      endTrackedProcesses();
      const cs = run.saveNow();
      io.err(
        cs
          ? `\nStopped. Changeset ${cs.id} is saved; review it with: pencil review ${cs.id}\n`
          : "\nStopped; nothing was staged.\n",
      );
      process.exit(cs ? 3 : 130);
    }
    controller.abort();
    io.err("\nStopping… what was staged so far is kept for review. (Ctrl-C again to save it and quit.)\n");
  };
  process.on("SIGINT", onInterrupt);
  // Stopped by a signal mid-run (app/stop-on-signal.ts), the session and what is staged are saved for review.
  const offStop = onStop(() => void run.saveNow());
  const loaded = instructionsFor(runtime);
  if (loaded.files.length > 0 || loaded.skipped.length > 0)
    io.out(io.colors.dim(`instructions: ${visible(describeInstructions(loaded))}\n`));
  // No human, no yes: without a terminal every question the run asks is answered no.
  const approver = io.interactive ? terminalApprover(io, () => view.pause()) : nobodyApprover;
  const hooks: RunHooks = { approver, emit: view.sink, signal: controller.signal };
  try {
    view.header(mode, run.modelLabels, runtime.ws.root, runtime.ws.home);
    if (existing) await run.followUp(goal, hooks);
    else await run.begin(hooks);
    (io.machine ? io.err : io.out)(
      view.closingLine({ usage: run.meter.usage, prices: readPrices(runtime.pencilHome) }),
    );
    // Revisions get their own stop button; the first run's was used or is spent.
    return { run, hooks: { approver, emit: view.sink } };
  } finally {
    process.off("SIGINT", onInterrupt);
    offStop();
    view.pause(); // a run that threw must not leave its spinner turning
  }
}

/**
 * Runs the agent (or the next turn of `existing`), then reviews: on a terminal, the
 * review of README "The review", with revisions, then the `› ` follow-up prompt in the same session;
 * without one, nothing is applied, the changeset is saved, and the exit code is 3.
 */
export async function runAndReview(
  io: CliIO,
  runtime: Runtime,
  goal: string,
  options: RunOptions = {},
  review: ReviewOptions = {},
  existing: AgentRun | null = null,
): Promise<number> {
  const { run, hooks } = await runWithProgress(io, runtime, "agent", goal, options, undefined, existing);
  const code = await reviewAfterRun(io, runtime, run, hooks, review);
  return followUps(io, code, async (text) => {
    if (/^\/model(\s|$)/.test(text)) return modelCommand(io, runtime, run, text.slice("/model".length).trim());
    const next = await runWithProgress(io, runtime, "agent", text, options, undefined, run);
    return reviewAfterRun(io, runtime, next.run, next.hooks, review);
  });
}

/** The follow-up prompt. */
export const FOLLOW_UP_PROMPT = "› ";

/**
 * In a terminal, asks `› ` for the next message in the session after each turn;
 * an empty line, Ctrl-D or Ctrl-C ends. Returns the exit code: 4 if any turn left
 * conflicts, else the last turn's; a turn left pending (3) ends the conversation.
 */
async function followUps(io: CliIO, first: number, turn: (text: string) => Promise<number>): Promise<number> {
  let code = first;
  let conflicted = first === 4;
  while (io.interactive && code !== 3) {
    io.out(io.colors.dim("\nFollow up in this session (empty line or Ctrl-D to end):\n"));
    const text = (await io.prompt(FOLLOW_UP_PROMPT))?.trim();
    if (!text) break;
    code = await turn(text);
    if (code === 4) conflicted = true;
  }
  return conflicted && code !== 3 ? 4 : code;
}

/** The review half of runAndReview, for callers that ran the agent themselves. */
async function reviewAfterRun(
  io: CliIO,
  runtime: Runtime,
  run: AgentRun,
  hooks: RunHooks,
  review: ReviewOptions = {},
): Promise<number> {
  const outcome = run.outcome!;
  const cs = run.changeset;
  if (io.machine) {
    // --json: one document. Nothing is applied without a person, so a staged changeset stays pending (exit 3).
    const doc = {
      stopped: outcome.stopped,
      text: outcome.text,
      models: outcome.models,
      ...(outcome.stopped === "error" ? { error: outcome.error } : {}),
      session: run.session?.id ?? null,
      // Dollars over the session's turns where every model has a price (local models are free); null when unknown.
      cost: costOf(run.meter.usage, readPrices(runtime.pencilHome)),
      // What this run ran, whether or not it staged anything (the changeset's list covers every turn it spans).
      commands: (run.lastRun?.commands ?? []).map(commandJson),
      changeset: cs
        ? { ...summarizeChangeset(cs), status: cs.status, commands: (cs.commands ?? []).map(commandJson) }
        : null,
    };
    io.out(`${JSON.stringify(doc, null, 2)}\n`);
    return outcome.stopped === "error" ? 1 : cs ? 3 : 0;
  }
  if (outcome.stopped === "error") {
    io.err(io.colors.red(`The run failed: ${outcome.error}\n`));
    if (cs)
      io.err(
        `The work staged before the failure is saved as ${cs.id}; review it with: ${hint(io, `review ${cs.id}`)}\n`,
      );
    return 1;
  }
  // The note says what the run was doing when it stopped (the step limit, a loop of identical calls).
  if (outcome.stopped === "step-limit" || outcome.stopped === "loop")
    io.err(io.colors.yellow(`${outcome.note ?? "The run hit its step limit; review what it staged."}\n`));
  if (!cs) {
    io.out(
      outcome.stopped === "aborted" ? "Stopped; nothing was staged.\n" : "Nothing was staged: no file would change.\n",
    );
    return 0;
  }
  if (!io.interactive) {
    io.out(formatSummary(cs, { color: io.color }));
    io.out(
      `\nNo terminal to review on, so nothing was applied. Changeset ${cs.id} is saved.\nReview it with: ${hint(io, `review ${cs.id}`)}   (or print it: ${hint(io, `review ${cs.id} --patch`)})\n`,
    );
    return 3;
  }
  return reviewLoop(io, runtime, cs, run, hooks, {}, review);
}

/** `$PENCIL_HOME/logs/<time>-<pid>.log`: where a run's tool outputs are kept whole. */
export function runLogPath(runtime: Runtime, now = new Date()): string {
  return join(
    runtime.pencilHome,
    "logs",
    `${now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15)}-${process.pid}.log`,
  );
}

/** A command as --json reports it: the line, how it ended, its exit status and time. */
function commandJson(c: CommandRecord): {
  command: string;
  outcome: string;
  exitCode: number | null;
  durationMs: number;
} {
  return { command: c.command, outcome: c.outcome, exitCode: c.exitCode, durationMs: c.durationMs };
}

/**
 * `/model` at the follow-up prompt: with a name, the rest of the session uses that model (see
 * app/model-switch.ts for the names it takes); without one, or when it cannot be used, says which
 * models are in use and which are known. Returns 0, so the conversation goes on.
 */
function modelCommand(io: CliIO, runtime: Runtime, run: AgentRun, name: string): number {
  const answer = answerModelCommand(runtime, run.modelLabels, name, (model) => run.switchModel(model));
  const paint = answer.switched ? io.colors.cyan : answer.ok ? (t: string) => t : io.colors.yellow;
  io.out(paint(`${answer.text}\n`));
  return 0;
}
