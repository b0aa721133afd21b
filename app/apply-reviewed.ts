import { applyChangeset, type ApplyResult } from "../core/apply/apply.ts";
import { changesetDigest, rebaseFileChange, type Changeset } from "../core/staging/changeset.ts";
import type { BaseState } from "../core/staging/overlay.ts";
import { DiskFileOps } from "../core/file-ops.ts";
import { ApplyError } from "../core/errors/apply-error.ts";
import { PencilError } from "../core/errors/pencil-error.ts";
import { UnknownChangesetError } from "../core/errors/unknown-changeset-error.ts";
import { UsageFailure } from "../core/errors/usage-failure.ts";
import { sha256 } from "../core/hash.ts";
import { LinkGuard } from "../core/policy/hard-links.ts";
import { specialBitsRefusal } from "../core/staging/overlay.ts";
import { decide } from "../core/policy/policy.ts";
import { findInterruptedApplies } from "../core/apply/recovery.ts";
import { withWorkspaceLock } from "../core/workspace-lock.ts";
import { resolveInWorkspace } from "../core/workspace.ts";
import type { Runtime } from "./runtime.ts";

/** What applying a review did: the apply's result, and the approved files another front end (or an earlier press) had already applied, which were left alone. */
export interface ReviewedApply extends ApplyResult {
  alreadyApplied: string[];
}

/**
 * Applies the approved files of a reviewed changeset, records the decisions and the
 * outcome in the store, and returns what was written and what conflicted. It runs
 * under the workspace lock and reads the changeset's stored state again under it, so
 * of two front ends approving the same files at once one applies and the other is
 * told they were already applied.
 */
export function applyReviewed(
  runtime: Runtime,
  changeset: Changeset,
  approved: string[],
  rejected: string[],
): ReviewedApply {
  assertSameWorkspace(runtime, changeset);
  return withWorkspaceLock(runtime.pencilHome, runtime.ws.root, "apply", () =>
    applyLocked(runtime, changeset, approved, rejected),
  );
}

function applyLocked(runtime: Runtime, changeset: Changeset, approved: string[], rejected: string[]): ReviewedApply {
  const interrupted = findInterruptedApplies(runtime.journalDir).find((i) => i.workspace === runtime.ws.root);
  if (interrupted) throw new ApplyError(`Nothing was applied: ${interrupted.message}`);
  adoptStoredProgress(runtime, changeset);
  // A file another front end already applied is settled: this review's say on it does not count.
  const settled = new Set(changeset.applied ?? []);
  const alreadyApplied = approved.filter((p) => settled.has(p));
  approved = approved.filter((p) => !settled.has(p));
  rejected = rejected.filter((p) => !settled.has(p));
  // The stored record says where each file goes; trust only what the reviewed path resolves to now, under today's policy.
  const refusedUpFront: { path: string; reason: string }[] = [];
  const writable = approved.filter((path) => {
    const reason = targetProblem(runtime, changeset, path);
    if (reason) refusedUpFront.push({ path, reason });
    return reason === null;
  });
  const written: ApplyResult =
    writable.length > 0
      ? applyChangeset({ changeset, approved: writable, journalDir: runtime.journalDir })
      : { applyId: null, applied: [], conflicts: [] };
  const result: ApplyResult = { ...written, conflicts: [...refusedUpFront, ...written.conflicts] };
  const decisions: Record<string, "approved" | "rejected"> = { ...(changeset.decisions ?? {}) };
  for (const p of approved) decisions[p] = "approved";
  for (const p of rejected) decisions[p] = "rejected";
  // A conflicted file was not written, so it is not approved: it stays pending, rebuilt on
  // today's disk so that the next review shows what approving it would now do.
  for (const c of result.conflicts) delete decisions[c.path];
  changeset.decisions = decisions;
  rebaseOnDisk(
    runtime,
    changeset,
    written.conflicts.map((c) => c.path),
  );
  if (result.applyId) changeset.applyIds = [...(changeset.applyIds ?? []), result.applyId];
  // A changeset may be decided over several calls (one card, then the next): count across all of them.
  const applied = new Set([...(changeset.applied ?? []), ...result.applied]);
  changeset.applied = [...applied];
  const conflicts = new Set([...(changeset.conflicts ?? []), ...result.conflicts.map((c) => c.path)]);
  for (const p of result.applied) conflicts.delete(p);
  changeset.conflicts = [...conflicts];
  changeset.status = statusFromDecisions(changeset);
  runtime.store.save(changeset);
  return { ...result, alreadyApplied };
}

/** Rebuilds the given files of `changeset` on what the disk holds now (digests included); files that cannot be are left as they were. */
function rebaseOnDisk(runtime: Runtime, changeset: Changeset, paths: string[]): void {
  if (paths.length === 0) return;
  const disk = new DiskFileOps();
  const readDisk = (real: string): Uint8Array | null => {
    try {
      return disk.readBytes(real);
    } catch {
      // Unreadable now: rebased as absent, so the next review shows the file as it stands (and apply checks again).
      return null;
    }
  };
  const targets = new Set(paths);
  const files = changeset.files.flatMap((file) => {
    if (!targets.has(file.path)) return [file];
    const st = disk.stat(file.real);
    if (st && st.kind !== "file") return [file];
    const bytes = st ? readDisk(file.real) : null;
    if (st && !bytes) return [file];
    const base: BaseState =
      st && bytes
        ? { exists: true, hash: sha256(bytes), size: bytes.length, mode: st.mode }
        : { exists: false, hash: null, size: 0, mode: null };
    const rebased = rebaseFileChange(runtime.ws, file, base, readDisk);
    if (rebased) return [rebased];
    // Nothing left to do (it was to be deleted, and it is gone): settled as rejected, nothing written.
    changeset.decisions = { ...(changeset.decisions ?? {}), [file.path]: "rejected" };
    return [file];
  });
  changeset.files = files;
  changeset.digest = changesetDigest(files);
}

/** A changeset's status from its decisions and what was applied: pending until every file is decided. */
export function statusFromDecisions(changeset: Changeset): Changeset["status"] {
  const applied = new Set(changeset.applied ?? []);
  if (changeset.files.some((f) => !changeset.decisions?.[f.path])) return "pending";
  if (applied.size === changeset.files.length) return "applied";
  return applied.size > 0 ? "partial" : "rejected";
}

/**
 * Another front end (the phone, another terminal) may have decided files of the same
 * changeset meanwhile: take its decisions and applies from the store first, so
 * saving this copy never erases them.
 */
function adoptStoredProgress(runtime: Runtime, changeset: Changeset): void {
  let stored: Changeset;
  try {
    stored = runtime.store.load(changeset.id);
  } catch (error) {
    // Not saved yet (or removed): there are no decisions of another front end to keep.
    if (UnknownChangesetError.isInstance(error)) return;
    // There but unreadable: it may hold another front end's decisions, so it is never written over.
    const why = PencilError.isInstance(error) ? error.userMessage : (error as Error).message;
    throw new ApplyError(
      `Nothing was applied: the saved record of changeset ${changeset.id} cannot be read (${why}), and saving this review would write over the decisions it may hold. Fix or move it aside, then review again.`,
    );
  }
  if (stored.digest !== changeset.digest) return;
  // The store is newer than any copy a front end holds: its decisions win.
  changeset.decisions = { ...(changeset.decisions ?? {}), ...(stored.decisions ?? {}) };
  changeset.applied = [...new Set([...(stored.applied ?? []), ...(changeset.applied ?? [])])];
  changeset.applyIds = [...new Set([...(stored.applyIds ?? []), ...(changeset.applyIds ?? [])])];
}

/** A changeset is applied only to the workspace it was made in; anything else is a usage error that names the right one. */
export function assertSameWorkspace(runtime: Runtime, changeset: Changeset): void {
  if (changeset.workspace !== runtime.ws.root) {
    throw new UsageFailure(
      `Changeset ${changeset.id} belongs to the workspace ${changeset.workspace}, not ${runtime.ws.root}. Run the command with -w ${changeset.workspace}.`,
    );
  }
}

/** Why an approved file must not be written where the record says, or null when it may. */
function targetProblem(runtime: Runtime, changeset: Changeset, path: string): string | null {
  const file = changeset.files.find((f) => f.path === path);
  if (!file) return null; // applyChangeset reports unknown paths itself.
  let now: string;
  try {
    now = resolveInWorkspace(runtime.ws, path).real;
  } catch (error) {
    return `its path no longer resolves (${(error as Error).message}); review again or re-run`;
  }
  if (now !== file.real)
    return `it now resolves to ${now}, not ${file.real} as when it was staged (a link changed, or the record was altered); review again or re-run`;
  // Staging refuses these bits; a record altered since must not bring them in either.
  const bits = file.after ? specialBitsRefusal(file.base.mode, file.after.mode) : null;
  if (bits) return bits;
  const verdict = decide(runtime.policy, { tool: "apply", access: "write", real: file.real });
  if (verdict.decision === "deny") return `writing it is denied: ${verdict.reason}`;
  // A hard link made since staging would carry the write to the file's other names.
  const linked = new LinkGuard({ root: runtime.ws.root, home: runtime.ws.home, pencilHome: runtime.pencilHome }).judge(
    file.real,
    "write",
    (other) => decide(runtime.policy, { tool: "apply", access: "write", real: other }),
  );
  if (linked?.decision === "deny") return `writing it is denied: ${linked.reason}`;
  return null;
}
