import type { Changeset } from "../core/staging/changeset.ts";
import { MAX_REVISION_ROUNDS, type Rejection } from "./rejection.ts";
import { applyReviewed, type ReviewedApply } from "./apply-reviewed.ts";
import { type HunkVerdict, narrowToKeptHunks } from "./keep-hunks.ts";
import type { Runtime } from "./runtime.ts";

/** The owner's decisions on some files of a changeset: paths to write, and rejections (reason "" when none was given). */
export interface ReviewVerdict {
  approved: string[];
  rejected: Rejection[];
  /** Files reviewed hunk by hunk: written as base + kept hunks, dropped hunks' reasons sent back like rejections'. */
  hunks?: HunkVerdict[];
}

/**
 * What follows a settled review, for a front end to render or act on:
 * `done` nothing goes back to the agent; `revise` send `reasons` back to the run;
 * `round-limit` reasons were given but the run has had `limit` rounds already;
 * `run-gone` reasons were given but no live run can take them.
 */
export type ReviewNext =
  | { kind: "done" }
  | { kind: "revise"; reasons: Rejection[] }
  | { kind: "round-limit"; reasons: Rejection[]; limit: number }
  | { kind: "run-gone"; reasons: Rejection[] };

/** A settled review: what the apply did, whether files of the changeset are still undecided, and what happens next. */
export interface Settlement {
  result: ReviewedApply;
  /** True when files of the changeset are still undecided after this apply (a conflict, or files not on this review). */
  pending: boolean;
  next: ReviewNext;
}

/**
 * The one "settle a review" rule both front ends follow: write exactly the approved
 * files, record every decision, then decide whether the reasons go back to the agent
 * (only to a live run, and only for MAX_REVISION_ROUNDS rounds). It performs no
 * revision and shows nothing: the front end renders `next` and starts the revision.
 * Throws what applyReviewed throws (a changeset from another workspace).
 */
export function settleReview(
  runtime: Runtime,
  changeset: Changeset,
  verdict: ReviewVerdict,
  run: { readonly rounds: number } | null,
): Settlement {
  // Hunk-reviewed files first become base + kept hunks in `changeset`; from there they are approved files like any other.
  const narrowed = narrowToKeptHunks(runtime, changeset, verdict.hunks ?? []);
  const result = applyReviewed(
    runtime,
    changeset,
    [...verdict.approved, ...narrowed.approved],
    [...verdict.rejected.map((r) => r.path), ...narrowed.rejected],
  );
  // A file whose hunks were decided on other content is not written: it stays pending, like a conflict.
  if (narrowed.stale.length > 0) result.conflicts = [...result.conflicts, ...narrowed.stale];
  const reasons = [...verdict.rejected, ...narrowed.reasons];
  return { result, pending: changeset.status === "pending", next: nextAfterReview(reasons, run) };
}

/**
 * A discard as a review: every file not decided yet is rejected, with no reason, so nothing is written and nothing
 * goes back to the agent. Files already decided keep their decisions.
 */
export function discardVerdict(changeset: Changeset): ReviewVerdict {
  const undecided = changeset.files.filter((f) => !changeset.decisions?.[f.path]);
  return { approved: [], rejected: undecided.map((f) => ({ path: f.path, reason: "" })) };
}

/** What follows rejections: a revision with their reasons, or why none happens. Pure. */
export function nextAfterReview(rejected: readonly Rejection[], run: { readonly rounds: number } | null): ReviewNext {
  const reasons = rejected.filter((r) => r.reason !== "");
  if (reasons.length === 0) return { kind: "done" };
  if (!run) return { kind: "run-gone", reasons };
  if (run.rounds >= MAX_REVISION_ROUNDS) return { kind: "round-limit", reasons, limit: MAX_REVISION_ROUNDS };
  return { kind: "revise", reasons };
}
