import type { ApplyResult } from "../core/apply/apply.ts";
import type { Changeset } from "../core/staging/changeset.ts";
import { approvedFiles, commitApplied, commitMessage, recordCommit } from "./git-commit.ts";
import type { Runtime } from "./runtime.ts";

/**
 * The commit after a phone's "Approve all & commit": one commit of exactly the files
 * that apply wrote, recorded on the changeset. Returns one line for the owner.
 */
export function commitAfterApply(runtime: Runtime, cs: Changeset, result: ApplyResult, summary: string): string {
  if (result.applied.length === 0) return "Nothing was applied, so nothing was committed.";
  const files = approvedFiles(cs, result.applied);
  const leftOut = cs.files.map((f) => f.path).filter((p) => !result.applied.includes(p));
  const commit = commitApplied(
    runtime.ws.root,
    files,
    commitMessage(cs.goal, summary, cs.id, { committed: files.map((f) => f.path), leftOut }),
  );
  if (!commit.ok) return `Not committed: ${commit.reason}`;
  try {
    const stored = runtime.store.load(cs.id);
    recordCommit(stored, commit);
    runtime.store.save(stored);
  } catch {
    // The record only feeds undo's message; the commit is made.
  }
  const skipped = commit.skipped.length
    ? ` (not committed: ${commit.skipped.map((s) => `${s.path}, ${s.reason}`).join("; ")})`
    : "";
  const note = commit.note ? ` ${commit.note}` : "";
  return `Committed ${commit.sha.slice(0, 12)} on ${commit.branch}: ${commit.files.length} file(s), not pushed.${skipped}${note}`;
}
