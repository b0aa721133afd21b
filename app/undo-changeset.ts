import { findEntry } from "../core/journal.ts";
import { undoApply, type UndoResult } from "../core/undo.ts";
import type { Runtime } from "./runtime.ts";

/**
 * Undoes an apply of this workspace (the newest when `ref` is absent; an apply or
 * changeset id otherwise) and records it on the changeset. A changeset decided over
 * several applies (say, one phone card after another) is marked undone only once
 * none of its applies is left on disk.
 */
export function undoInWorkspace(runtime: Runtime, ref?: string): UndoResult {
  const result = undoApply(runtime.journalDir, ref, runtime.ws.root);
  const stillApplied = findEntry(
    runtime.journalDir,
    (e) => e.changesetId === result.changesetId && (e.state === "applied" || e.state === "partially-undone"),
  );
  try {
    const cs = runtime.store.load(result.changesetId);
    cs.status = stillApplied ? "partial" : "undone";
    runtime.store.save(cs);
  } catch {
    // The changeset file may be gone; the journal alone is enough to undo.
  }
  return result;
}
