import type { AgentRun } from "../../app/agent-run.ts";
import { type ApprovedFile, commitApplied, commitMessage, gitState, recordCommit } from "../../app/git-commit.ts";
import type { Runtime } from "../../app/runtime.ts";
import type { Changeset } from "../../core/staging/changeset.ts";
import { visible } from "../../render/visible-text.ts";
import { UsageFailure } from "../../core/errors/usage-failure.ts";
import type { CliIO } from "./io.ts";

/** `--commit` outside a git repository is a usage error, said before any work is done. */
export function requireGitForCommit(runtime: Runtime): void {
  if (!gitState(runtime.ws.root))
    throw new UsageFailure(
      `--commit needs a git repository, and ${runtime.ws.root} is not in one. Run without --commit, or git init first.`,
    );
}

/** One line before the review: the branch, and whether the working tree was clean before anything is applied. */
export function showGitState(io: CliIO, runtime: Runtime): void {
  const state = gitState(runtime.ws.root);
  if (!state) return;
  const tree = state.clean
    ? "working tree clean"
    : `working tree had ${state.changes} uncommitted change(s) before this review (a --commit takes only the applied files)`;
  io.out(io.colors.dim(`git: on ${visible(state.branch)}, ${tree}\n`));
}

/** One review round's applied files: the changeset, the paths written, and their approved bytes. */
export interface AppliedRound {
  cs: Changeset;
  paths: string[];
  files: ApprovedFile[];
}

/**
 * `--commit`: one commit of exactly the approved bytes of the files this review applied, with the goal, the
 * applied files and (when it names none of the others) the model's summary as its message, recorded on each
 * changeset it covers.
 */
export function commitAfterReview(
  io: CliIO,
  runtime: Runtime,
  first: Changeset,
  run: AgentRun | null,
  rounds: AppliedRound[],
): void {
  const c = io.colors;
  // A later round's bytes for a path win: they are what the disk holds now.
  const byPath = new Map<string, ApprovedFile>();
  for (const r of rounds) for (const f of r.files) byPath.set(f.path, f);
  const files = [...byPath.values()];
  if (files.length === 0) {
    io.out("Nothing was applied, so nothing was committed.\n");
    return;
  }
  const committed = files.map((f) => f.path);
  const leftOut = [...new Set(rounds.flatMap((r) => r.cs.files.map((f) => f.path)))].filter((p) => !byPath.has(p));
  const result = commitApplied(
    runtime.ws.root,
    files,
    commitMessage(first.goal, run?.outcome?.text ?? "", rounds.map((r) => r.cs.id).join(", "), { committed, leftOut }),
  );
  if (!result.ok) {
    io.err(`${c.yellow("not committed:")} ${result.reason}\n`);
    return;
  }
  for (const round of rounds) {
    try {
      const cs = runtime.store.load(round.cs.id);
      recordCommit(cs, { ...result, files: round.paths.filter((p) => result.files.includes(p)) });
      runtime.store.save(cs);
    } catch {
      // The record is a convenience for undo's message; the commit itself is made.
    }
  }
  for (const s of result.skipped) io.out(`${c.yellow("not committed")} ${visible(s.path)}: ${s.reason}\n`);
  if (result.note) io.err(`${c.yellow("note:")} ${result.note}\n`);
  io.out(
    `${c.green("committed")} ${result.sha.slice(0, 12)} on ${visible(result.branch)}: ${result.files.length} file(s). Nothing was pushed.\n`,
  );
}
