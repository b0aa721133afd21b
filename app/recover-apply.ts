import { readEntry } from "../core/apply/journal.ts";
import { finishInterrupted, rollbackInterrupted, type RecoveryResult } from "../core/apply/recovery.ts";
import { statusFromDecisions } from "./apply-reviewed.ts";
import { withWorkspaceLock } from "../core/workspace-lock.ts";
import { UsageFailure } from "../core/errors/usage-failure.ts";
import type { Runtime } from "./runtime.ts";
import { markUndone } from "./undo-changeset.ts";

/**
 * Finishes or rolls back an apply or undo that was interrupted (kill -9, power loss)
 * in this workspace, under the workspace lock, and records the outcome on its
 * changeset: finished files count as applied; rolled-back files are undecided again,
 * so the changeset can be reviewed anew. A finished undo marks the changeset undone;
 * a rolled-back undo leaves it applied.
 */
export function recoverInWorkspace(runtime: Runtime, action: "finish" | "rollback", applyId: string): RecoveryResult {
  const entry = readEntry(runtime.journalDir, applyId);
  if (entry.workspace !== runtime.ws.root) {
    throw new UsageFailure(
      `Apply ${applyId} was made in ${entry.workspace}, not ${runtime.ws.root}: run pencil recover ${action} ${applyId} -w ${entry.workspace}.`,
    );
  }
  return withWorkspaceLock(runtime.pencilHome, runtime.ws.root, "recover", () => {
    const result =
      action === "finish"
        ? finishInterrupted(runtime.journalDir, applyId)
        : rollbackInterrupted(runtime.journalDir, applyId);
    if (result.operation === "undo") {
      if (result.state !== "applied") markUndone(runtime, entry.changesetId);
    } else {
      recordApplyOutcome(
        runtime,
        entry.changesetId,
        entry.files.map((f) => f.path),
        action,
        result,
      );
    }
    return result;
  });
}

function recordApplyOutcome(
  runtime: Runtime,
  changesetId: string,
  paths: string[],
  action: "finish" | "rollback",
  result: RecoveryResult,
): void {
  const applyId = result.applyId;
  try {
    const cs = runtime.store.load(changesetId);
    const refused = new Set(result.refused.map((r) => r.path));
    const touched = paths.filter((p) => !refused.has(p));
    const decisions = { ...(cs.decisions ?? {}) };
    if (action === "finish") {
      cs.applied = [...new Set([...(cs.applied ?? []), ...touched])];
      cs.applyIds = [...new Set([...(cs.applyIds ?? []), applyId])];
      for (const p of touched) decisions[p] = "approved";
    } else {
      for (const p of touched) delete decisions[p];
      cs.applied = (cs.applied ?? []).filter((p) => !touched.includes(p));
    }
    cs.decisions = decisions;
    cs.status = statusFromDecisions(cs);
    runtime.store.save(cs);
  } catch {
    // The changeset file may be gone; the journal alone settles the files.
  }
}
