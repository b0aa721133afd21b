import { spawn } from "node:child_process";
import type { AgentRun } from "../../app/agent-run.ts";
import type { RunHooks } from "../../app/run-turn.ts";
import type { Runtime } from "../../app/runtime.ts";
import { settleReview } from "../../app/settle-review.ts";
import type { Changeset } from "../../core/staging/changeset.ts";
import { revisionLimitText } from "../../render/revision-limit.ts";
import { hint, type CliIO } from "./io.ts";
import { reportApply, type ReviewExit } from "./review-flow.ts";
import type { PageDecisions } from "../web/page-decisions.ts";
import { type PageOutcome, type ReviewPhase, startReviewServer } from "../web/review-server.ts";

/** How a web review is started: whether to open a browser, and where the address goes besides the terminal. */
export interface WebReviewOptions {
  /** Open the owner's browser on the page (never in tests or CI). */
  openBrowser: boolean;
}

/**
 * `review --web`: the changeset is reviewed on a page served on 127.0.0.1. The page's
 * decisions settle through the same apply as the terminal's and the phone's; reasons
 * go back to a live run, whose revision is served on the same page. Resolves the exit
 * code: 0 done, 3 left for later (the page's Leave, or Ctrl-C), 4 conflicts.
 */
export async function webReview(
  io: CliIO,
  runtime: Runtime,
  first: Changeset,
  run: AgentRun | null,
  hooks: RunHooks | null,
  options: WebReviewOptions,
): Promise<ReviewExit> {
  let cs = first;
  let phase: ReviewPhase = "reviewing";
  let last: PageOutcome | null = null;
  let conflicted = false;
  let finish: (code: ReviewExit) => void = () => {};
  const finished = new Promise<ReviewExit>((resolve) => {
    finish = (code) => {
      phase = "done";
      resolve(code);
    };
  });
  const server = startReviewServer({
    changeset: () => cs,
    phase: () => phase,
    outcome: () => last,
    leave: () => finish(3),
    async apply(decisions: PageDecisions) {
      const decided = decisions.verdict(cs);
      if ("undecided" in decided)
        return {
          error: `Decide every file first; undecided: ${decided.undecided.slice(0, 5).join(", ")}${decided.undecided.length > 5 ? ` and ${decided.undecided.length - 5} more` : ""}.`,
        };
      const { verdict } = decided;
      let settled: ReturnType<typeof settleReview>;
      try {
        settled = settleReview(runtime, cs, verdict, run);
      } catch (error) {
        return { error: `Nothing was applied: ${(error as Error).message}` };
      }
      const { result, next } = settled;
      const rejected = [...verdict.rejected];
      reportApply(io, result, rejected, cs);
      if (result.conflicts.length > 0) conflicted = true;
      last = {
        applied: result.applied,
        alreadyApplied: result.alreadyApplied,
        rejected,
        conflicts: result.conflicts,
        next: next.kind,
      };
      decisions.clear();
      if (next.kind === "round-limit") io.out(`${revisionLimitText(next.limit, hint(io, "agent"))}\n`);
      if (next.kind === "revise" && run && hooks) {
        phase = "revising";
        io.out(io.colors.cyan(`\nSending ${next.reasons.length} reason(s) back to the agent…\n`));
        void run
          .revise(next.reasons, hooks, result)
          .then(() => {
            const revised = run.changeset;
            if (revised && revised.files.some((f) => !revised.decisions?.[f.path])) {
              cs = revised;
              phase = "reviewing";
              io.out(`The revision is on the page: ${server.url.replace(/\?token=.*/, "")}\n`);
            } else {
              io.out("The agent staged nothing new.\n");
              finish(conflicted ? 4 : 0);
            }
          })
          .catch((error) => {
            io.err(`The revision failed: ${(error as Error).message}\n`);
            finish(conflicted ? 4 : 0);
          });
      } else finish(conflicted ? 4 : 0);
      return last;
    },
  });
  io.out(`\nReview changeset ${cs.id} in your browser:\n  ${server.url}\n`);
  io.out(
    io.colors.dim(
      "The address works once and only on this machine; the page stops when the review ends (Ctrl-C leaves it for later).\n",
    ),
  );
  if (options.openBrowser) openBrowser(server.url);
  const onInterrupt = () => finish(3);
  process.once("SIGINT", onInterrupt);
  const code = await finished;
  process.off("SIGINT", onInterrupt);
  // The last answer (Apply's outcome) reaches the page before the server goes.
  await Bun.sleep(200);
  server.stop();
  if (code === 3) io.out(`\nChangeset ${cs.id} is saved; review it later with: ${hint(io, `review ${cs.id}`)}\n`);
  if (code === 4)
    io.out(
      `Files that changed on disk since staging stay pending; review them again: ${hint(io, `review ${cs.id}`)}\n`,
    );
  return code;
}

/** Opens the page in the owner's browser where there is one to open; never in CI or a test, and never fatally. */
function openBrowser(url: string): void {
  const command = process.platform === "darwin" ? "open" : process.platform === "linux" ? "xdg-open" : null;
  if (!command) return;
  if (process.platform === "linux" && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return;
  try {
    const child = spawn(command, [url], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No browser to open: the address is printed above.
  }
}
