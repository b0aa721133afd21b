import { nobodyApprover } from "../../agent/approver.ts";
import type { RunMode } from "../../agent/prompts.ts";
import { join } from "node:path";
import { AgentRun, chooseModels, type RunHooks, type RunOptions } from "../../app/agent-run.ts";
import type { Runtime } from "../../app/runtime.ts";
import { formatSummary, summarizeChangeset } from "../../render/summary.ts";
import { hint, type CliIO } from "./io.ts";
import { describeInstructions, instructionsFor } from "../../app/project-instructions.ts";
import { visible } from "../../render/visible-text.ts";
import { ProgressView } from "./progress.ts";
import { reviewLoop, type ReviewOptions } from "./review-flow.ts";
import { terminalApprover } from "./terminal-approver.ts";

/** A run with terminal progress; Ctrl-C stops it and keeps what was staged. */
export async function runWithProgress(io: CliIO, runtime: Runtime, mode: RunMode, goal: string, options: RunOptions = {}, view = new ProgressView(io, { logPath: runLogPath(runtime) })): Promise<{ run: AgentRun; hooks: RunHooks }> {
  const controller = new AbortController();
  const onInterrupt = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
    io.err("\nStopping… what was staged so far is kept for review. (Ctrl-C again to quit at once.)\n");
  };
  process.on("SIGINT", onInterrupt);
  const loaded = instructionsFor(runtime);
  if (loaded.files.length > 0 || loaded.skipped.length > 0) io.out(io.colors.dim(`instructions: ${visible(describeInstructions(loaded))}\n`));
  // No human, no yes: without a terminal every question the run asks is answered no.
  const approver = io.interactive ? terminalApprover(io, () => view.pause()) : nobodyApprover;
  const hooks: RunHooks = { approver, emit: view.sink, signal: controller.signal };
  try {
    // Built here, so the header can name the model before the first request goes out.
    const models = options.models ?? chooseModels(runtime, { emit: (event) => view.sink(event) });
    view.header(mode, models.labels, runtime.ws.root, runtime.ws.home);
    const run = await AgentRun.start(runtime, mode, goal, hooks, { ...options, models });
    (io.machine ? io.err : io.out)(view.closingLine());
    // Revisions get their own stop button; the first run's was used or is spent.
    return { run, hooks: { approver, emit: view.sink } };
  } finally {
    process.off("SIGINT", onInterrupt);
    view.pause(); // a run that threw must not leave its spinner turning
  }
}

/**
 * Runs the agent, then reviews: on a terminal, the A6 review with revisions;
 * without one, nothing is applied, the changeset is saved, and the exit code is 3.
 */
export async function runAndReview(io: CliIO, runtime: Runtime, goal: string, options: RunOptions = {}, review: ReviewOptions = {}): Promise<number> {
  const { run, hooks } = await runWithProgress(io, runtime, "agent", goal, options);
  return reviewAfterRun(io, runtime, run, hooks, review);
}

/** The review half of runAndReview, for callers that ran the agent themselves. */
export async function reviewAfterRun(io: CliIO, runtime: Runtime, run: AgentRun, hooks: RunHooks, review: ReviewOptions = {}): Promise<number> {
  const outcome = run.outcome!;
  const cs = run.changeset;
  if (io.machine) {
    // --json: one document. Nothing is applied without a person, so a staged changeset stays pending (exit 3).
    const doc = {
      stopped: outcome.stopped,
      text: outcome.text,
      models: outcome.models,
      ...(outcome.stopped === "error" ? { error: outcome.error } : {}),
      changeset: cs ? { ...summarizeChangeset(cs), status: cs.status } : null,
    };
    io.out(`${JSON.stringify(doc, null, 2)}\n`);
    return outcome.stopped === "error" ? 1 : cs ? 3 : 0;
  }
  if (outcome.stopped === "error") {
    io.err(io.colors.red(`The run failed: ${outcome.error}\n`));
    if (cs) io.err(`The work staged before the failure is saved as ${cs.id}; review it with: ${hint(io, `review ${cs.id}`)}\n`);
    return 1;
  }
  if (outcome.stopped === "step-limit") io.err(io.colors.yellow("The run hit its step limit; review what it staged.\n"));
  if (!cs) {
    io.out(outcome.stopped === "aborted" ? "Stopped; nothing was staged.\n" : "Nothing was staged: no file would change.\n");
    return 0;
  }
  if (!io.interactive) {
    io.out(formatSummary(cs, { color: io.color }));
    io.out(`\nNo terminal to review on, so nothing was applied. Changeset ${cs.id} is saved.\nReview it with: ${hint(io, `review ${cs.id}`)}   (or print it: ${hint(io, `review ${cs.id} --patch`)})\n`);
    return 3;
  }
  return reviewLoop(io, runtime, cs, run, hooks, {}, review);
}

/** `$PENCIL_HOME/logs/<time>-<pid>.log`: where a run's tool outputs are kept whole. */
export function runLogPath(runtime: Runtime, now = new Date()): string {
  return join(runtime.pencilHome, "logs", `${now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15)}-${process.pid}.log`);
}
