import { rmSync } from "node:fs";
import {
  type DiskFile,
  type FileImage,
  placeImage,
  readDiskFile,
  removeEmptyDirs,
  sameContent,
  sameImage,
  tempLeftovers,
} from "./file-image.ts";
import { faultPoint } from "../fault-point.ts";
import { spaceProblem } from "./free-space.ts";
import {
  type JournalEntry,
  type JournalFile,
  markedInProgress,
  readEntry,
  type RefusedFile,
  saveEntry,
  verifiedBlobs,
} from "./journal.ts";
import { JournalError } from "../errors/journal-error.ts";

/** Where a file of an interrupted apply stands: still its before-image, already its after-image, or changed by someone else. */
type InterruptedFileState = "old" | "new" | "other";

/** One file of an interrupted apply. */
interface InterruptedFile {
  path: string;
  real: string;
  state: InterruptedFileState;
}

/**
 * An apply that never reached `applied`, or an undo that never reached `undone` (the
 * process was killed or the machine stopped), with what finishing or rolling back would do.
 */
export interface InterruptedApply {
  applyId: string;
  /** What was interrupted: the apply itself, or an undo of it. */
  operation: "apply" | "undo";
  changesetId: string;
  workspace: string;
  goal: string;
  createdAt: string;
  files: InterruptedFile[];
  counts: Record<InterruptedFileState, number>;
  /** Temporary files a killed atomic write left beside the files; finish and roll back remove them. */
  leftovers: string[];
  /** What happened and how to finish or roll back, for the user. */
  message: string;
}

/** What a finish or rollback did: files it wrote, files already in the wanted state, files it refused (state `other`), temp files removed. */
export interface RecoveryResult {
  applyId: string;
  operation: "apply" | "undo";
  written: string[];
  alreadyDone: string[];
  refused: RefusedFile[];
  removedLeftovers: string[];
  state: "applied" | "rolled-back" | "undone" | "partially-undone";
}

/** Entries still `applying` or `undoing`, newest first, each file classified against its before- and after-image. */
export function findInterruptedApplies(journalDir: string): InterruptedApply[] {
  return markedInProgress(journalDir)
    .filter((e) => e.state === "applying" || e.state === "undoing")
    .map(describe);
}

/**
 * Finishes an interrupted operation. An apply: writes the after-image of every file
 * still `old` and marks it `applied`. An undo: restores the before-image of every file
 * still `new` and marks it `undone`. Files in state `other` are refused either way.
 */
export function finishInterrupted(journalDir: string, applyId: string): RecoveryResult {
  return settle(journalDir, applyId, "finish");
}

/**
 * Rolls back an interrupted operation. An apply: restores the before-image of every
 * file already `new` and marks it `rolled-back`. An undo: writes the after-image again
 * of every file it had reverted and marks the apply `applied` again.
 */
export function rollbackInterrupted(journalDir: string, applyId: string): RecoveryResult {
  return settle(journalDir, applyId, "rollback");
}

/** Classifies a file; when before and after have the same content (a mode-only change) the mode decides. */
function classify(file: JournalFile, disk: DiskFile): InterruptedFileState {
  const isNew = sameContent(file.after, disk);
  const isOld = sameContent(file.before, disk);
  if (isNew && isOld) return sameImage(file.after, disk) ? "new" : sameImage(file.before, disk) ? "old" : "other";
  return isNew ? "new" : isOld ? "old" : "other";
}

function describe(entry: JournalEntry): InterruptedApply {
  const files = entry.files.map((f) => ({ path: f.path, real: f.real, state: classify(f, readDiskFile(f.real)) }));
  const counts = { old: 0, new: 0, other: 0 };
  for (const f of files) counts[f.state]++;
  const others =
    counts.other > 0 ? ` ${counts.other} were changed by someone else since and will be left alone either way.` : "";
  const operation = entry.state === "undoing" ? "undo" : "apply";
  const message =
    operation === "apply"
      ? `Apply ${entry.applyId} of changeset ${entry.changesetId} was interrupted: ${counts.new} of ${files.length} files have the new content, ` +
        `${counts.old} still the old one.${others} Finish it to write the ${counts.old} remaining files ` +
        `(pencil recover finish ${entry.applyId}), or roll it back to restore the ${counts.new} written ones ` +
        `(pencil recover rollback ${entry.applyId}).`
      : `Undo of apply ${entry.applyId} (changeset ${entry.changesetId}) was interrupted: ${counts.old} of ${files.length} files are back to their old content, ` +
        `${counts.new} still have the applied one.${others} Finish the undo to revert the ${counts.new} remaining files ` +
        `(pencil recover finish ${entry.applyId}), or roll it back to write the applied content again into the ${counts.old} reverted ones ` +
        `(pencil recover rollback ${entry.applyId}).`;
  return {
    applyId: entry.applyId,
    operation,
    changesetId: entry.changesetId,
    workspace: entry.workspace,
    goal: entry.goal,
    createdAt: entry.createdAt,
    files,
    counts,
    leftovers: tempLeftovers(entry.files.map((f) => f.real)),
    message,
  };
}

/** Brings every file of an interrupted entry to its after- (`new`) or before-image (`old`), file by file. */
function settle(journalDir: string, applyId: string, action: "finish" | "rollback"): RecoveryResult {
  const entry = readEntry(journalDir, applyId);
  if (entry.state !== "applying" && entry.state !== "undoing") {
    throw new JournalError(
      `Apply ${applyId} is ${entry.state}, not interrupted: there is nothing to finish or roll back.`,
    );
  }
  const operation = entry.state === "undoing" ? "undo" : "apply";
  // Finishing an apply and rolling back an undo both lead to the applied content.
  const goal: "new" | "old" = (operation === "apply") === (action === "finish") ? "new" : "old";
  const target = (f: JournalFile): FileImage => (goal === "new" ? f.after : f.before);
  const states = new Map(entry.files.map((f) => [f, classify(f, readDiskFile(f.real))]));
  // Every content to write is read and verified first: a damaged journal changes nothing.
  const toWrite = entry.files.filter((f) => states.get(f) !== goal && states.get(f) !== "other");
  const blobs = verifiedBlobs(journalDir, entry, toWrite.map(target));
  const size = (image: FileImage) => (image.exists ? image.size : 0);
  const from = (f: JournalFile): FileImage => (goal === "new" ? f.before : f.after);
  const space = spaceProblem(
    toWrite.map((f) => ({ real: f.real, beforeSize: size(from(f)), afterSize: size(target(f)) })),
    [],
  );
  if (space)
    throw new JournalError(
      `Nothing was written: ${space}. Free some space, then run it again; the ${operation} stays interrupted until then.`,
    );
  const removedLeftovers = tempLeftovers(entry.files.map((f) => f.real));
  for (const leftover of removedLeftovers) rmSync(leftover, { force: true });

  const written: string[] = [];
  const alreadyDone: string[] = [];
  const refused: RefusedFile[] = [];
  // Deletes last, as at apply; for a rollback that also lets the created directories go.
  const order = [...entry.files].sort((a, b) => Number(!target(a).exists) - Number(!target(b).exists));
  const plainDirs = new Set<string>();
  for (const file of order) {
    const state = states.get(file)!;
    if (state === goal) {
      alreadyDone.push(file.path);
    } else if (state === "other") {
      refused.push({
        path: file.path,
        reason: `was changed on disk by someone else since the ${operation} started; left as it is, check it by hand`,
      });
    } else {
      try {
        const image = target(file);
        placeImage(file.real, image, image.exists ? blobs.get(image.hash)! : null, false, plainDirs);
        faultPoint("file-placed", file.path);
      } catch (error) {
        const cause = error instanceof Error ? error.message : String(error);
        throw new JournalError(
          `Writing ${file.path} failed (${cause}); the ${operation} of ${applyId} stays interrupted with ${written.length} more files done. Fix the cause and run it again.`,
        );
      }
      written.push(file.path);
    }
  }
  if (goal === "old") removeEmptyDirs(entry.createdDirs);
  const state =
    operation === "apply"
      ? goal === "new"
        ? "applied"
        : "rolled-back"
      : goal === "new"
        ? "applied"
        : refused.length > 0
          ? "partially-undone"
          : "undone";
  entry.state = state;
  entry.refused = refused;
  saveEntry(journalDir, entry);
  return { applyId, operation, written, alreadyDone, refused, removedLeftovers, state };
}
