import type { ApplyResult } from "../../core/apply.ts";
import type { Changeset, FileChange } from "../../core/changeset.ts";
import { renderFileDiff } from "../../render/diff-view.ts";
import { visible } from "../../render/visible-text.ts";
import { formatSummary } from "../../render/summary.ts";
import { MAX_REVISION_ROUNDS, type AgentRun, type Rejection, type RunHooks } from "../../app/agent-run.ts";
import { applyReviewed } from "../../app/apply-reviewed.ts";
import type { Runtime } from "../../app/runtime.ts";
import { answerWord } from "./answer-words.ts";
import type { CliIO } from "./io.ts";

/** The owner's verdict on one changeset. `quit`: input ended mid-review, so nothing is decided. */
export interface ReviewDecision {
  approved: string[];
  rejected: Rejection[];
  quit: boolean;
}

const PROMPT = "[y] approve  [n] reject  [a] approve all remaining  [q] reject the rest — or type a reason to reject with feedback: ";

/** Shows the summary, then each file's diff, and collects a decision per file (contract A6). */
export async function reviewChangeset(io: CliIO, cs: Changeset): Promise<ReviewDecision> {
  const c = io.colors;
  io.out(`\n${c.bold(`Changeset ${cs.id}`)} — ${visible(cs.goal)}\n${c.dim(`workspace ${visible(cs.workspace)}`)}\n`);
  io.out(formatSummary(cs, { color: io.color }));
  const approved: string[] = [];
  const rejected: Rejection[] = [];
  const files = cs.files;
  for (let i = 0; i < files.length; i++) {
    const file = files[i]!;
    showDiff(io, file, i, files.length);
    for (;;) {
      const line = await io.prompt(PROMPT);
      if (line === null) return { approved: [], rejected: [], quit: true };
      const answer = line.trim();
      const word = answerWord(answer);
      if (word === "yes") {
        approved.push(file.path);
      } else if (word === "no") {
        rejected.push({ path: file.path, reason: "" });
      } else if (word === "quit") {
        for (const rest of files.slice(i)) rejected.push({ path: rest.path, reason: "" });
        return { approved, rejected, quit: false };
      } else if (word === "all") {
        // Approving the rest never skips their diffs: show every one, then confirm.
        const rest = files.slice(i + 1);
        for (const [k, other] of rest.entries()) showDiff(io, other, i + 1 + k, files.length);
        const confirm = await io.prompt(`Approve ${rest.length + 1} file(s): ${[file, ...rest].map((f) => visible(f.path)).join(", ")}? [y/N] `);
        if (confirm === null) return { approved: [], rejected: [], quit: true };
        if (answerWord(confirm) !== "yes") {
          io.out("Not approved; deciding file by file.\n");
          showDiff(io, file, i, files.length);
          continue;
        }
        // A binary change is never approved in a batch: each one gets its own question.
        for (const f of [file, ...rest]) {
          if (!f.binary) {
            approved.push(f.path);
            continue;
          }
          const own = await io.prompt(c.red(c.bold(`${visible(f.path)} is a binary change${f.flags.includes("became-binary") ? " (it was text)" : ""}`)) + ` — approve all does not cover it. Approve ${visible(f.path)} itself? [y/N] `);
          if (own === null) return { approved: [], rejected: [], quit: true };
          if (answerWord(own) === "yes") approved.push(f.path);
          else rejected.push({ path: f.path, reason: "" });
        }
        return { approved, rejected, quit: false };
      } else if (answer.length > 1) {
        rejected.push({ path: file.path, reason: answer });
      } else {
        io.out("Type y, n, a, q, or a reason.\n");
        continue;
      }
      break;
    }
  }
  return { approved, rejected, quit: false };
}

/** Prints what an apply did, conflicts included. */
export function reportApply(io: CliIO, result: ApplyResult, rejected: Rejection[]): void {
  const c = io.colors;
  for (const path of result.applied) io.out(`${c.green("applied")}  ${visible(path)}\n`);
  for (const r of rejected) io.out(`${c.yellow("rejected")} ${visible(r.path)}${r.reason ? ` — ${visible(r.reason)}` : ""}\n`);
  for (const conflict of result.conflicts) io.out(`${c.red("conflict")} ${visible(conflict.path)}: ${visible(conflict.reason)}\n`);
}

/** How a review loop ended, as an exit code (contract A2): 0 done, 3 left pending, 4 conflicts. */
export type ReviewExit = 0 | 3 | 4;

/**
 * Reviews, applies, and — when files were rejected with reasons and a live run
 * exists — sends them back for revision, up to MAX_REVISION_ROUNDS.
 */
export async function reviewLoop(io: CliIO, runtime: Runtime, first: Changeset, run: AgentRun | null, hooks: RunHooks | null): Promise<ReviewExit> {
  let cs: Changeset | null = first;
  let conflicted = false;
  while (cs) {
    // Files already decided (say, from the phone) are not asked about again.
    const undecided = cs.files.filter((f) => !cs!.decisions?.[f.path]);
    if (undecided.length === 0) break;
    const decision = await reviewChangeset(io, { ...cs, files: undecided });
    if (decision.quit) {
      io.out(`\nNothing applied. Changeset ${cs.id} is saved; review it later with: pencil review ${cs.id}\n`);
      return 3;
    }
    const result = applyReviewed(runtime, cs, decision.approved, decision.rejected.map((r) => r.path));
    reportApply(io, result, decision.rejected);
    if (result.conflicts.length > 0) {
      conflicted = true;
      io.out(io.colors.red(`${result.conflicts.length} approved file(s) changed on disk since the agent read them and were not written.\n`));
    }
    const reasons = decision.rejected.filter((r) => r.reason !== "");
    if (reasons.length === 0 || !run || !hooks) break;
    if (run.rounds >= MAX_REVISION_ROUNDS) {
      io.out(`Stopping after ${MAX_REVISION_ROUNDS} revision rounds; run pencil agent again with a sharper goal.\n`);
      break;
    }
    io.out(io.colors.cyan(`\nSending ${reasons.length} reason(s) back to the agent…\n`));
    await run.revise(reasons, hooks, result);
    cs = run.changeset;
    if (!cs) io.out("The agent staged nothing new.\n");
  }
  return conflicted ? 4 : 0;
}

function showDiff(io: CliIO, file: FileChange, index: number, total: number): void {
  // A decision follows what was shown, so the review never cuts: no line is shortened and none is left out
  // (the terminal wraps long lines). A hidden payload after 600 spaces is on screen like everything else.
  const view = renderFileDiff(file, { color: io.color, width: Number.MAX_SAFE_INTEGER, maxLines: Number.MAX_SAFE_INTEGER });
  io.out(`\n${io.colors.bold(`[${index + 1}/${total}]`)} ${view.text}\n`);
  if (view.fallback) io.out(io.colors.yellow("(diff too complex to compute quickly: showing before and after in full)\n"));
}
