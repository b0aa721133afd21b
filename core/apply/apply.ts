import { lstatSync, rmSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import type { Changeset, FileChange } from "../staging/changeset.ts";
import {
  type DiskFile,
  type FileImage,
  imageOf,
  placeImage,
  readDiskFile,
  removeEmptyDirs,
  tempLeftovers,
} from "./file-image.ts";
import { faultPoint } from "../fault-point.ts";
import { spaceProblem } from "./free-space.ts";
import { sha256 } from "../hash.ts";
import {
  createEntry,
  fsyncDir,
  type JournalEntry,
  type JournalFile,
  newApplyId,
  type RefusedFile,
  saveEntry,
} from "./journal.ts";
import { ApplyError } from "../errors/apply-error.ts";

/*
 * Durability. The journal entry (blob pack, then entry.json, then the directories)
 * is fsynced before the first file is touched, so from then on any interruption is
 * recoverable: recovery compares each file with its before- and after-image.
 * Each file is written to a temporary file and renamed over the target, which is all
 * a kill -9 needs: the page cache outlives the process, so every file is either old
 * or new. An fsync per file would also cover a power loss between the rename and the
 * kernel's writeback, but it is not affordable: bench/apply-bench.ts (1,000 files of
 * 10 KB, ext4 in a shared VM) measured 0.7-2.1 s with it against 0.4-0.6 s without,
 * 1.8-3.4x the apply and mostly over the 1 s target; with slower flushes it only grows. So it is
 * opt-in (`fsyncFiles`). After a power loss without it, a file may come back old, new or (on
 * some file systems) truncated: recovery then reports it as `other`, and its
 * before-image is still in the journal.
 */

/** What to apply: the changeset, the `FileChange.path` values the owner approved, and where the journal lives. */
export interface ApplyOptions {
  changeset: Changeset;
  approved: readonly string[];
  /** Journal directory, e.g. `$PENCIL_HOME/journal`. */
  journalDir: string;
  /** fsync every file before its rename (survives power loss, not only kill -9); off by default, see the note above. */
  fsyncFiles?: boolean;
  /** Test hook: called after each file is written or deleted, with its path and 0-based position in write order. */
  onFileWritten?: (path: string, index: number) => void;
}

/** What an apply did: its journal id (null when nothing was written), the paths written, and the approved files it refused. */
export interface ApplyResult {
  applyId: string | null;
  applied: string[];
  conflicts: RefusedFile[];
}

const AGAIN = "review again or re-run";

interface Planned {
  file: JournalFile;
  beforeBytes: Uint8Array | null;
  afterBytes: Uint8Array | null;
}

/**
 * Writes exactly the approved files of a changeset. Each is first checked against
 * the base it was staged on; a file changed on disk since is not written and is
 * reported as a conflict while the others are applied. The journal entry (with every
 * before- and after-content) is durable before the first write; deletes come last.
 * A failure mid-way restores the files already written and throws ApplyError.
 */
export function applyChangeset(options: ApplyOptions): ApplyResult {
  const { changeset, journalDir } = options;
  const changes = selectApproved(changeset, options.approved);

  const conflicts: RefusedFile[] = [];
  const plan: Planned[] = [];
  const createdDirs = new Set<string>();
  const dirKinds = new Map<string, DirKind>();
  for (const change of changes) {
    const disk = readDiskFile(change.real);
    let reason = conflictReason(change, disk);
    let missing: string[] = [];
    if (reason === null && change.after !== null) {
      const parents = checkParents(change.real, dirKinds);
      if (typeof parents === "string") reason = parents;
      else missing = parents;
    }
    if (reason !== null) {
      conflicts.push({ path: change.path, reason });
      continue;
    }
    for (const dir of missing) createdDirs.add(dir);
    const before = imageOf(disk)!;
    const after: FileImage = change.after
      ? { exists: true, hash: change.after.hash, size: change.after.bytes.length, mode: change.after.mode }
      : { exists: false };
    plan.push({
      file: { path: change.path, real: change.real, kind: change.kind, before, after },
      beforeBytes: disk.kind === "file" ? disk.bytes : null,
      afterBytes: change.after?.bytes ?? null,
    });
  }
  if (plan.length === 0) return { applyId: null, applied: [], conflicts };

  // Deletes last: a half-done apply then never lacks a file the written ones may need.
  plan.sort((a, b) => Number(a.file.after.exists === false) - Number(b.file.after.exists === false));

  const blobs = new Map<string, Uint8Array>();
  for (const p of plan) {
    if (p.file.before.exists && p.beforeBytes) blobs.set(p.file.before.hash, p.beforeBytes);
    if (p.file.after.exists && p.afterBytes) blobs.set(p.file.after.hash, p.afterBytes);
  }
  let packBytes = 0;
  for (const bytes of blobs.values()) packBytes += bytes.length;
  const space = spaceProblem(
    plan.map((p) => ({
      real: p.file.real,
      beforeSize: p.beforeBytes?.length ?? 0,
      afterSize: p.afterBytes?.length ?? 0,
    })),
    [...createdDirs],
    [{ dir: journalDir, bytes: packBytes + journalEntryBytes(plan.length), inodes: 3 }],
  );
  if (space)
    throw new ApplyError(
      `Nothing was applied: ${space}. Free some space, then approve again (the changeset stays pending).`,
    );
  const now = new Date().toISOString();
  let entry: JournalEntry;
  try {
    entry = createEntry(
      journalDir,
      {
        version: 1,
        applyId: newApplyId(),
        changesetId: changeset.id,
        changesetDigest: changeset.digest,
        workspace: changeset.workspace,
        goal: changeset.goal,
        createdAt: now,
        updatedAt: now,
        state: "applying",
        files: plan.map((p) => p.file),
        createdDirs: [...createdDirs].sort(),
        conflicts,
        refused: [],
      },
      blobs,
    );
  } catch (error) {
    // createEntry removed what it had written; no file was touched.
    const why = error instanceof Error ? error.message : String(error);
    throw new ApplyError(
      `Nothing was applied: the journal entry in ${journalDir} could not be written (${why}). Free some space there (or fix its permissions), then approve again (the changeset stays pending).`,
    );
  }

  const written: Planned[] = [];
  let current = plan[0]!;
  const plainDirs = new Set<string>();
  try {
    for (const [index, p] of plan.entries()) {
      current = p;
      placeImage(p.file.real, p.file.after, p.afterBytes, options.fsyncFiles === true, plainDirs);
      written.push(p);
      options.onFileWritten?.(p.file.path, index);
      faultPoint("file-placed", p.file.path);
    }
  } catch (error) {
    throw failMidway(journalDir, entry, written, current, error);
  }
  if (options.fsyncFiles) for (const dir of new Set(plan.map((p) => dirname(p.file.real)))) fsyncDir(dir);

  entry.state = "applied";
  saveEntry(journalDir, entry);
  return { applyId: entry.applyId, applied: plan.map((p) => p.file.path), conflicts };
}

/** A generous size for a journal's entry.json (paths, hashes, states) and the temporary copy its last rewrite needs. */
function journalEntryBytes(files: number): number {
  return 2 * (4096 + 1024 * files);
}

/** The approved changes, validated: every path known, no path twice, each change consistent with its own hashes. */
function selectApproved(changeset: Changeset, approved: readonly string[]): FileChange[] {
  const byPath = new Map<string, FileChange>();
  for (const change of changeset.files) {
    if (byPath.has(change.path))
      throw new ApplyError(`Changeset ${changeset.id} lists ${change.path} twice: rebuild the changeset.`);
    byPath.set(change.path, change);
  }
  const unknown = approved.filter((p) => !byPath.has(p));
  if (unknown.length > 0) {
    throw new ApplyError(
      `Not in changeset ${changeset.id}: ${unknown.join(", ")}. Approve paths exactly as the changeset lists them (see review).`,
    );
  }
  const chosen = [...new Set(approved)].map((p) => byPath.get(p)!);
  const reals = new Set<string>();
  for (const change of chosen) {
    const problem = malformed(change);
    if (problem)
      throw new ApplyError(
        `Changeset ${changeset.id} is malformed at ${change.path}: ${problem}; nothing was applied. Rebuild the changeset.`,
      );
    if (reals.has(change.real))
      throw new ApplyError(
        `Changeset ${changeset.id} changes ${change.real} twice; nothing was applied. Rebuild the changeset.`,
      );
    reals.add(change.real);
  }
  return chosen.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Why a change cannot be trusted as written, or null. The bytes must hash to the hash the approval bound to. */
function malformed(change: FileChange): string | null {
  if (!isAbsolute(change.real)) return `its real path ${change.real} is not absolute`;
  if ((change.after === null) !== (change.kind === "delete")) return `kind ${change.kind} does not match its content`;
  if (change.base.exists === (change.kind === "create")) return `kind ${change.kind} does not match its base`;
  if (change.base.exists && !change.base.hash) return "its base has no hash";
  if (change.after && sha256(change.after.bytes) !== change.after.hash)
    return "its content does not match its hash (the approved content)";
  return null;
}

/** Why the disk no longer matches the base the change was staged on, or null when it still does. */
function conflictReason(change: FileChange, disk: DiskFile): string | null {
  if (disk.kind === "other") return `is now ${disk.what} on disk, not the file the agent saw; ${AGAIN}`;
  if (!change.base.exists)
    return disk.kind === "absent" ? null : `was created on disk since the agent staged it; ${AGAIN}`;
  if (disk.kind === "absent") return `was deleted on disk since the agent read it; ${AGAIN}`;
  if (disk.hash !== change.base.hash) return `changed on disk since the agent read it; ${AGAIN}`;
  // The owner's own chmod is a change too: applying would silently undo it.
  if (change.base.mode !== null && disk.mode !== change.base.mode) {
    return `its permissions changed on disk since the agent read it (${octal(change.base.mode)} → ${octal(disk.mode)}); ${AGAIN}`;
  }
  return null;
}

function octal(mode: number): string {
  return mode.toString(8).padStart(3, "0");
}

type DirKind = "dir" | "absent" | "link" | "not-dir";

/**
 * The parent directories a write of `real` would create (deepest first), or why it
 * must not happen: real paths were resolved through every symlink when staged, so a
 * parent that is now a link (or a file) means the tree changed under the change.
 */
function checkParents(real: string, cache: Map<string, DirKind>): string[] | string {
  const missing: string[] = [];
  let dir = dirname(real);
  while (true) {
    let kind = cache.get(dir);
    if (kind === undefined) {
      kind = kindOf(dir);
      cache.set(dir, kind);
    }
    if (kind === "link") return `its parent ${dir} is now a symbolic link on disk; ${AGAIN}`;
    if (kind === "not-dir") return `its parent ${dir} is not a directory on disk; ${AGAIN}`;
    if (kind === "absent") missing.push(dir);
    const up = dirname(dir);
    if (up === dir) return missing;
    dir = up;
  }
}

function kindOf(dir: string): DirKind {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() ? "dir" : st.isSymbolicLink() ? "link" : "not-dir";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "absent";
    if (code === "ENOTDIR") return "not-dir";
    throw error;
  }
}

/** Restores the files written before a failure, marks the entry rolled back, and builds the error to throw. */
function failMidway(
  journalDir: string,
  entry: JournalEntry,
  written: Planned[],
  failed: Planned,
  error: unknown,
): ApplyError {
  const cause = error instanceof Error ? error.message : String(error);
  try {
    // Temporary files first: on a full disk their space is what the restores need.
    for (const leftover of tempLeftovers(entry.files.map((f) => f.real))) rmSync(leftover, { force: true });
    for (const p of [...written].reverse()) placeImage(p.file.real, p.file.before, p.beforeBytes);
    removeEmptyDirs(entry.createdDirs);
    entry.state = "rolled-back";
    entry.error = `writing ${failed.file.path} failed: ${cause}`;
    saveEntry(journalDir, entry);
  } catch (restoreError) {
    const why = restoreError instanceof Error ? restoreError.message : String(restoreError);
    return new ApplyError(
      `Writing ${failed.file.path} failed (${cause}), and restoring the ${written.length} files already written failed too (${why}). ` +
        `Journal entry ${entry.applyId} records the apply as interrupted: finish it or roll it back once the cause is fixed.`,
    );
  }
  return new ApplyError(
    `Writing ${failed.file.path} failed (${cause}). The ${written.length} files already written were restored; nothing was applied. Fix the cause and apply again.`,
  );
}
