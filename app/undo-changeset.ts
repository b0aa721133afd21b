import { findEntry } from "../core/apply/journal.ts";
import { undoApply, type UndoResult } from "../core/apply/undo.ts";
import { withWorkspaceLock } from "../core/workspace-lock.ts";
import type { Runtime } from "./runtime.ts";

/**
 * Undoes an apply of this workspace (the newest when `ref` is absent; an apply or
 * changeset id otherwise) and records it on the changeset, under the workspace lock
 * (never at the same time as an apply or another undo). A changeset decided over
 * several applies (say, one phone card after another) is marked undone only once
 * none of its applies is left on disk.
 */
export function undoInWorkspace(runtime: Runtime, ref?: string): UndoResult & { commits: string[] } {
  return withWorkspaceLock(runtime.pencilHome, runtime.ws.root, "undo", () => {
    const result = undoApply(runtime.journalDir, ref, runtime.ws.root);
    markUndone(runtime, result.changesetId);
    return { ...result, commits: commitsOf(runtime, result.changesetId) };
  });
}

/** The git commits `--commit` made of a changeset's files: undo leaves them in history and says so. */
function commitsOf(runtime: Runtime, changesetId: string): string[] {
  try {
    return (runtime.store.load(changesetId).commits ?? []).map((c) => c.sha);
  } catch {
    // Only feeds undo's note about commits: an unreadable record was already named by the load that undo itself made.
    return [];
  }
}

/** Records on a changeset that one of its applies was undone: `undone` once none is left on disk, `partial` before. */
export function markUndone(runtime: Runtime, changesetId: string): void {
  const stillApplied = findEntry(
    runtime.journalDir,
    (e) =>
      e.changesetId === changesetId &&
      (e.state === "applied" || e.state === "partially-undone" || e.state === "undoing"),
  );
  try {
    const cs = runtime.store.load(changesetId);
    cs.status = stillApplied ? "partial" : "undone";
    runtime.store.save(cs);
  } catch {
    // The changeset file may be gone; the journal alone is enough to undo.
  }
}
