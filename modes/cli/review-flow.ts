import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ReviewedApply } from "../../app/apply-reviewed.ts";
import type { Changeset, FileChange } from "../../core/staging/changeset.ts";
import { renderFileDiff } from "../../render/diff-view.ts";
import type { HunkVerdict } from "../../app/keep-hunks.ts";
import { fileHunks } from "../../core/staging/file-hunks.ts";
import { reviewHunks } from "./hunk-review.ts";
import { visible } from "../../render/visible-text.ts";
import { findDependencies, splitDependencies } from "../../render/dependencies.ts";
import { formatSteps } from "../../render/steps-view.ts";
import { formatSummary } from "../../render/summary.ts";
import { wrapText } from "../../render/wrap.ts";
import type { AgentRun } from "../../app/agent-run.ts";
import type { Rejection } from "../../app/rejection.ts";
import type { RunHooks } from "../../app/run-turn.ts";
import { settleReview } from "../../app/settle-review.ts";
import { revisionLimitText } from "../../render/revision-limit.ts";
import type { Runtime } from "../../app/runtime.ts";
import { wordMeaning } from "./answer-words.ts";
import { hint, type CliIO } from "./io.ts";
import { type AppliedRound, commitAfterReview, showGitState } from "./git-review.ts";
import { approvedFiles } from "../../app/git-commit.ts";
import { terminalEditHook } from "./editor-hook.ts";

/** The owner's verdict on one changeset. `quit`: input ended mid-review, so nothing is decided. */
export interface ReviewDecision {
  approved: string[];
  rejected: Rejection[];
  quit: boolean;
  /** Files approved with only some of their hunks (`h`); absent when none was. */
  hunks?: HunkVerdict[];
}

/** Hooks a review may be given; without one, its key says plainly that it is not there. */
export interface ReviewHooks {
  /** The checkpoints (model steps) that staged `path`, rendered for the terminal. */
  steps?: (cs: Changeset, path: string) => string;
  /** Opens the staged file in an editor; resolves the file to review in its place, or null when left unchanged. */
  edit?: (cs: Changeset, file: FileChange) => Promise<FileChange | null>;
}

/** The per-file question: within 60 columns (README "The review": its keys, spelled short; `?` explains them). */
export const REVIEW_PROMPT = "Approve? [y]es [n]o [a]ll [q]uit [r]eason [e]dit [s]teps ";
/** The question on a file whose diff has several hunks: the same keys and `[h]`, still within 60 columns. */
const HUNKS_PROMPT = "[y]es [n]o [a]ll [q]uit [r]eason [e]dit [s]teps [h]unks ";
const REVIEW_KEYS = "ynaqres?h";
const KEY_HELP = [
  "y  approve this file",
  "n  reject it",
  "a  approve all remaining (their diffs first, then asks)",
  "q  reject this file and the rest",
  "r  reject with a reason (a line of text the agent reads)",
  "e  edit the staged file before deciding",
  "s  the steps that staged it",
  "h  go through its hunks: keep or drop each, then approve the result (when its diff has several)",
  "Words like ok or lgtm are asked about before they count.",
];

/**
 * Shows the summary, then each file's diff, and collects a decision per file (README
 * "The review"). Files that import each other are named first; a decision that would write a
 * file without one it imports is put to the owner once more before it stands.
 */
export async function reviewChangeset(io: CliIO, cs: Changeset, hooks: ReviewHooks = {}): Promise<ReviewDecision> {
  const c = io.colors;
  io.out(
    `\n${wrapText(`${c.bold(`Changeset ${cs.id}`)} — ${visible(cs.goal)}`, io.columns, "  ")}\n${cs.sessionGoal ? `${c.dim(wrapText(`in the session of: ${visible(cs.sessionGoal.split("\n", 1)[0]!.slice(0, 200))}`, io.columns, "  "))}\n` : ""}${c.dim(`workspace ${visible(cs.workspace)}`)}\n`,
  );
  io.out(formatSummary(cs, { color: io.color, width: io.columns }));
  const deps = findDependencies(cs, diskReader(cs));
  for (const d of deps)
    io.out(
      `${wrapText(c.cyan(`${visible(d.from)} imports ${visible(d.to)}: decide them together.`), io.columns, "  ")}\n`,
    );
  // The files as last shown: an edit replaces its file here, so deciding again shows (and approves) the edited
  // content, which is what the changeset being applied holds, never the agent's original.
  const files = [...cs.files];
  for (;;) {
    const decision = await decideFiles(io, cs, files, hooks);
    if (decision.quit) return decision;
    const broken = splitDependencies(
      deps,
      [...decision.approved, ...(decision.hunks ?? []).map((h) => h.path)],
      decision.rejected.map((r) => r.path),
    );
    if (broken.length === 0) return decision;
    io.out("\n");
    for (const d of broken) {
      io.out(
        `${wrapText(c.yellow(`! ${visible(d.from)} (approved) imports ${visible(d.to)} (rejected): written alone, it may leave the code failing.`), io.columns, "  ")}\n`,
      );
    }
    const go = await io.key("Apply as decided? [y] yes  [n] decide again ", "yn");
    if (go === null) return { approved: [], rejected: [], quit: true };
    if (go === "y") return decision;
    io.out("Deciding again, file by file.\n");
  }
}

async function decideFiles(io: CliIO, cs: Changeset, files: FileChange[], hooks: ReviewHooks): Promise<ReviewDecision> {
  const c = io.colors;
  const approved: string[] = [];
  const rejected: Rejection[] = [];
  const hunkVerdicts: HunkVerdict[] = [];
  const decided = () => ({
    approved,
    rejected,
    quit: false,
    ...(hunkVerdicts.length > 0 ? { hunks: hunkVerdicts } : {}),
  });
  const quit: ReviewDecision = { approved: [], rejected: [], quit: true };
  for (let i = 0; i < files.length; i++) {
    const file = files[i]!;
    showDiff(io, file, i, files.length);
    const splittable = (fileHunks(file)?.length ?? 0) > 1;
    for (;;) {
      let key = await io.key(splittable ? HUNKS_PROMPT : REVIEW_PROMPT, REVIEW_KEYS);
      if (key === null) return quit;
      if (key.length > 1) {
        const meaning = wordMeaning(key);
        if (meaning.kind === "key") key = meaning.key;
        else if (meaning.kind === "sounds-like") {
          const verb = meaning.key === "y" ? "approve" : "reject";
          const sure = await io.key(`Take "${visible(key)}" as ${verb} ${visible(file.path)}? [y/N] `, "yn");
          if (sure === null) return quit;
          if (sure !== "y") continue;
          key = meaning.key;
        } else {
          io.out(
            `${wrapText(`"${visible(key)}" is not a key: nothing decided. To send it to the agent, press r, then type it. ? lists the keys.`, io.columns)}\n`,
          );
          continue;
        }
      }
      if (key === "y") {
        approved.push(file.path);
      } else if (key === "n") {
        rejected.push({ path: file.path, reason: "" });
      } else if (key === "q") {
        for (const rest of files.slice(i)) rejected.push({ path: rest.path, reason: "" });
        return decided();
      } else if (key === "r") {
        const reason = await io.prompt("Reason (Enter on an empty line to go back): ");
        if (reason === null) return quit;
        if (reason.trim() === "") continue;
        rejected.push({ path: file.path, reason: reason.trim() });
      } else if (key === "h") {
        if (!splittable) {
          io.out(
            `${wrapText("This file's diff is a single hunk (or cannot be split): decide it whole with y or n.", io.columns)}\n`,
          );
          continue;
        }
        const outcome = await reviewHunks(io, file);
        if (outcome.kind === "quit") return quit;
        if (outcome.kind === "back") {
          showDiff(io, file, i, files.length);
          continue;
        }
        if (outcome.kind === "rejected") rejected.push({ path: file.path, reason: outcome.reason });
        else if (outcome.kind === "approved") approved.push(file.path);
        else hunkVerdicts.push(outcome.verdict);
      } else if (key === "s") {
        io.out(hooks.steps ? hooks.steps(cs, file.path) : "No steps are recorded for this changeset yet.\n");
        continue;
      } else if (key === "e") {
        if (!hooks.edit) {
          io.out(
            `${wrapText("Editing a staged file is not available here. Decide with y or n, or press r to ask the agent for a change.", io.columns)}\n`,
          );
          continue;
        }
        const edited = await hooks.edit(cs, file);
        if (edited) {
          files[i] = edited;
          i--;
          break;
        }
        continue;
      } else if (key === "a") {
        // Approving the rest never skips their diffs: show every one, then confirm.
        const rest = files.slice(i + 1);
        for (const [k, other] of rest.entries()) showDiff(io, other, i + 1 + k, files.length);
        io.out(
          `${wrapText(`Approve ${rest.length + 1} file(s): ${[file, ...rest].map((f) => visible(f.path)).join(", ")}?`, io.columns, "  ")}\n`,
        );
        const confirm = await io.key("Approve them all? [y/N] ", "yn");
        if (confirm === null) return quit;
        if (confirm !== "y") {
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
          io.out(
            `${c.red(c.bold(`${visible(f.path)} is a binary change${f.flags.includes("became-binary") ? " (it was text)" : ""}`))} — approve all does not cover it.\n`,
          );
          const own = await io.key(`Approve ${visible(f.path)} itself? [y/N] `, "yn");
          if (own === null) return quit;
          if (own === "y") approved.push(f.path);
          else rejected.push({ path: f.path, reason: "" });
        }
        return decided();
      } else {
        io.out(KEY_HELP.map((l) => `  ${l}\n`).join(""));
        continue;
      }
      break;
    }
  }
  return decided();
}

/** Prints what an apply did, conflicts included, and which written files import files that were not written. */
export function reportApply(io: CliIO, result: ReviewedApply, rejected: Rejection[], cs?: Changeset): void {
  const c = io.colors;
  const line = (text: string) => io.out(`${wrapText(text, io.columns, "  ")}\n`);
  for (const path of result.applied) line(`${c.green("applied")}  ${visible(path)}`);
  for (const path of result.alreadyApplied)
    line(`${c.dim("already applied")} ${visible(path)} (by another review of this changeset; left as it is)`);
  for (const r of rejected)
    line(`${c.yellow("rejected")} ${visible(r.path)}${r.reason ? ` — ${visible(r.reason)}` : ""}`);
  for (const conflict of result.conflicts)
    line(`${c.red("conflict")} ${visible(conflict.path)}: ${visible(conflict.reason)}`);
  if (!cs) return;
  const notWritten = [...rejected.map((r) => r.path), ...result.conflicts.map((x) => x.path)];
  for (const d of splitDependencies(findDependencies(cs, diskReader(cs)), result.applied, notWritten)) {
    line(c.yellow(`note: ${visible(d.from)} was written, but ${visible(d.to)}, which it imports, was not.`));
  }
}

/** What the owner asked for on the command line besides the review itself. */
export interface ReviewOptions {
  /** `--commit`: one git commit of exactly the files applied in this review. */
  commit?: boolean;
  /** `review --open`: every file goes to $VISUAL/$EDITOR before the review asks about it (`e` works either way). */
  open?: boolean;
}

/** How a review loop ended, as an exit code (README "Commands", exit codes): 0 done, 3 left pending, 4 conflicts. */
export type ReviewExit = 0 | 3 | 4;

/**
 * Reviews, applies, and — when files were rejected with reasons and a live run
 * exists — sends them back for revision; settleReview decides which.
 */
export async function reviewLoop(
  io: CliIO,
  runtime: Runtime,
  first: Changeset,
  run: AgentRun | null,
  hooks: RunHooks | null,
  reviewHooks: ReviewHooks = {},
  options: ReviewOptions = {},
): Promise<ReviewExit> {
  let cs: Changeset | null = first;
  let conflicted = false;
  showGitState(io, runtime);
  // Every round's applied files go into the one commit made at the end (`--commit`).
  const appliedRounds: AppliedRound[] = [];
  // Without hooks the run cannot be driven from here, so it is as good as gone.
  const live = run && hooks ? { run, hooks } : null;
  while (cs) {
    // Files already decided (say, from the phone) are not asked about again.
    const undecided = cs.files.filter((f) => !cs!.decisions?.[f.path]);
    if (undecided.length === 0) break;
    // The owner's edits rebuild the changeset: `current` holds the rebuilt one, which is what gets applied.
    const current = { cs };
    const editFile = terminalEditHook(io, runtime, run, current);
    if (options.open) {
      // `review --open`: each file goes to the editor first; the review then shows what was saved.
      for (const file of undecided) await editFile(file);
    }
    const edit = reviewHooks.edit ?? ((_: Changeset, file: FileChange) => editFile(file));
    // [s]: the session's checkpoints that staged the file, when the run has a session.
    const session = run?.session;
    const steps =
      reviewHooks.steps ??
      (session
        ? (_cs: Changeset, path: string) => formatSteps(session.checkpoints(), { color: io.color, path })
        : undefined);
    const decision = await reviewChangeset(
      io,
      { ...current.cs, files: current.cs.files.filter((f) => !current.cs.decisions?.[f.path]) },
      { ...reviewHooks, edit, ...(steps ? { steps } : {}) },
    );
    cs = current.cs;
    if (decision.quit) {
      io.out(`\nNothing applied. Changeset ${cs.id} is saved; review it later with: ${hint(io, `review ${cs.id}`)}\n`);
      return 3;
    }
    const { result, next } = settleReview(runtime, cs, decision, live?.run ?? null);
    reportApply(io, result, decision.rejected, cs);
    for (const h of decision.hunks ?? [])
      if (result.applied.includes(h.path))
        io.out(
          `${wrapText(`${io.colors.cyan("kept")}     ${visible(h.path)}: ${h.kept.length} hunk(s) written, the others dropped`, io.columns, "  ")}\n`,
        );
    if (result.applied.length > 0)
      appliedRounds.push({ cs, paths: result.applied, files: approvedFiles(cs, result.applied) });
    if (result.conflicts.length > 0) {
      conflicted = true;
      io.out(
        io.colors.red(
          `${result.conflicts.length} approved file(s) were not written: they changed on disk since the agent read them (or can no longer be written).\n`,
        ),
      );
      io.out(`They stay pending; review them again against the disk as it is now: ${hint(io, `review ${cs.id}`)}\n`);
    }
    if (next.kind === "round-limit") io.out(`${revisionLimitText(next.limit, hint(io, "agent"))}\n`);
    if (next.kind !== "revise" || !live) break;
    io.out(io.colors.cyan(`\nSending ${next.reasons.length} reason(s) back to the agent…\n`));
    await live.run.revise(next.reasons, live.hooks, result);
    cs = live.run.changeset;
    if (!cs) io.out("The agent staged nothing new.\n");
  }
  if (options.commit) commitAfterReview(io, runtime, first, run, appliedRounds);
  return conflicted ? 4 : 0;
}

function showDiff(io: CliIO, file: FileChange, index: number, total: number): void {
  // A decision follows what was shown, so the review never cuts: no line is shortened and none is left out
  // (long lines wrap under their gutter). A hidden payload after 600 spaces is on screen like everything else.
  const view = renderFileDiff(file, {
    color: io.color,
    width: io.columns,
    wrap: true,
    maxLines: Number.MAX_SAFE_INTEGER,
    words: true,
  });
  // The header line (path, kind, counts) wraps like text; the body wrapped itself under its gutter.
  const [head = "", ...body] = view.text.split("\n");
  io.out(
    `\n${wrapText(`${io.colors.bold(`[${index + 1}/${total}]`)} ${head}`, io.columns, "  ")}\n${body.join("\n")}\n`,
  );
  if (view.fallback)
    io.out(io.colors.yellow("(diff too complex to compute quickly: showing before and after in full)\n"));
}

/** Reads an unchanged workspace file (for following imports); null outside the workspace, when unreadable, or when large. */
function diskReader(cs: Changeset): (path: string) => string | null {
  return (path) => {
    if (path.startsWith("/") || path.startsWith("..") || /(^|\/)\.env(\.|$)/.test(path)) return null;
    try {
      const full = join(cs.workspace, path);
      return statSync(full).size <= 256 * 1024 ? readFileSync(full, "utf8") : null;
    } catch {
      return null;
    }
  };
}
