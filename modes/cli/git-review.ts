import type { AgentRun } from "../../app/agent-run.ts";
import { commitApplied, commitMessage, gitState, recordCommit } from "../../app/git-commit.ts";
import type { Runtime } from "../../app/runtime.ts";
import type { Changeset } from "../../core/changeset.ts";
import { visible } from "../../render/visible-text.ts";
import { UsageError } from "./args.ts";
import type { CliIO } from "./io.ts";

/** `--commit` outside a git repository is a usage error, said before any work is done. */
export function requireGitForCommit(runtime: Runtime): void {
  if (!gitState(runtime.ws.root))
    throw new UsageError(
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

/**
 * `--commit`: one commit of exactly the files this review applied, with the goal and
 * the model's summary as its message, recorded on each changeset it covers.
 */
export function commitAfterReview(
  io: CliIO,
  runtime: Runtime,
  first: Changeset,
  run: AgentRun | null,
  rounds: { id: string; paths: string[] }[],
): void {
  const c = io.colors;
  const paths = [...new Set(rounds.flatMap((r) => r.paths))];
  if (paths.length === 0) {
    io.out("Nothing was applied, so nothing was committed.\n");
    return;
  }
  const result = commitApplied(
    runtime.ws.root,
    paths,
    commitMessage(first.goal, run?.outcome?.text ?? "", rounds.map((r) => r.id).join(", ")),
  );
  if (!result.ok) {
    io.err(`${c.yellow("not committed:")} ${result.reason}\n`);
    return;
  }
  for (const round of rounds) {
    try {
      const cs = runtime.store.load(round.id);
      recordCommit(cs, { ...result, files: round.paths.filter((p) => result.files.includes(p)) });
      runtime.store.save(cs);
    } catch {
      // The record is a convenience for undo's message; the commit itself is made.
    }
  }
  for (const s of result.skipped) io.out(`${c.yellow("not committed")} ${visible(s.path)}: ${s.reason}\n`);
  io.out(
    `${c.green("committed")} ${result.sha.slice(0, 12)} on ${visible(result.branch)}: ${result.files.length} file(s). Nothing was pushed.\n`,
  );
}
