import { rmSync } from "node:fs";
import { type DiskFile, type FileImage, placeImage, readDiskFile, removeEmptyDirs, sameContent, sameImage, tempLeftovers } from "./file-image.ts";
import { BlobReader, type JournalEntry, type JournalFile, JournalError, markedApplying, readEntry, type RefusedFile, saveEntry } from "./journal.ts";

/** Where a file of an interrupted apply stands: still its before-image, already its after-image, or changed by someone else. */
export type InterruptedFileState = "old" | "new" | "other";

/** One file of an interrupted apply. */
export interface InterruptedFile {
  path: string;
  real: string;
  state: InterruptedFileState;
}

/** An apply that never reached `applied` (the process was killed or the machine stopped), with what finishing or rolling back would do. */
export interface InterruptedApply {
  applyId: string;
  changesetId: string;
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
  written: string[];
  alreadyDone: string[];
  refused: RefusedFile[];
  removedLeftovers: string[];
  state: "applied" | "rolled-back";
}

/** Entries still `applying`, newest first, each file classified against its before- and after-image. */
export function findInterruptedApplies(journalDir: string): InterruptedApply[] {
  return markedApplying(journalDir)
    .filter((e) => e.state === "applying")
    .map(describe);
}

/** Finishes an interrupted apply: writes the after-image of every file still `old`, refuses files in state `other`, marks it `applied`. */
export function finishInterrupted(journalDir: string, applyId: string): RecoveryResult {
  return settle(journalDir, applyId, "new");
}

/** Rolls back an interrupted apply: restores the before-image of every file already `new`, refuses files in state `other`, marks it `rolled-back`. */
export function rollbackInterrupted(journalDir: string, applyId: string): RecoveryResult {
  return settle(journalDir, applyId, "old");
}

/** Classifies a file; when before and after have the same content (a mode-only change) the mode decides. */
export function classify(file: JournalFile, disk: DiskFile): InterruptedFileState {
  const isNew = sameContent(file.after, disk);
  const isOld = sameContent(file.before, disk);
  if (isNew && isOld) return sameImage(file.after, disk) ? "new" : sameImage(file.before, disk) ? "old" : "other";
  return isNew ? "new" : isOld ? "old" : "other";
}

function describe(entry: JournalEntry): InterruptedApply {
  const files = entry.files.map((f) => ({ path: f.path, real: f.real, state: classify(f, readDiskFile(f.real)) }));
  const counts = { old: 0, new: 0, other: 0 };
  for (const f of files) counts[f.state]++;
  const others = counts.other > 0 ? ` ${counts.other} were changed by someone else since and will be left alone either way.` : "";
  const message =
    `Apply ${entry.applyId} of changeset ${entry.changesetId} was interrupted: ${counts.new} of ${files.length} files have the new content, ` +
    `${counts.old} still the old one.${others} Finish it to write the ${counts.old} remaining files ` +
    `(pencil recover finish ${entry.applyId}), or roll it back to restore the ${counts.new} written ones ` +
    `(pencil recover rollback ${entry.applyId}).`;
  return {
    applyId: entry.applyId,
    changesetId: entry.changesetId,
    goal: entry.goal,
    createdAt: entry.createdAt,
    files,
    counts,
    leftovers: tempLeftovers(entry.files.map((f) => f.real)),
    message,
  };
}

/** Brings every file of an interrupted entry to its after- (`new`) or before-image (`old`), file by file. */
function settle(journalDir: string, applyId: string, goal: "new" | "old"): RecoveryResult {
  const entry = readEntry(journalDir, applyId);
  if (entry.state !== "applying") {
    throw new JournalError(`Apply ${applyId} is ${entry.state}, not interrupted: there is nothing to finish or roll back.`);
  }
  const blobs = new BlobReader(journalDir, entry);
  const target = (f: JournalFile): FileImage => (goal === "new" ? f.after : f.before);
  const removedLeftovers = tempLeftovers(entry.files.map((f) => f.real));
  for (const leftover of removedLeftovers) rmSync(leftover, { force: true });

  const written: string[] = [];
  const alreadyDone: string[] = [];
  const refused: RefusedFile[] = [];
  // Deletes last, as at apply; for a rollback that also lets the created directories go.
  const order = [...entry.files].sort((a, b) => Number(!target(a).exists) - Number(!target(b).exists));
  const plainDirs = new Set<string>();
  for (const file of order) {
    const state = classify(file, readDiskFile(file.real));
    if (state === goal) {
      alreadyDone.push(file.path);
    } else if (state === "other") {
      refused.push({ path: file.path, reason: "was changed on disk by someone else since the apply started; left as it is, check it by hand" });
    } else {
      try {
        placeImage(file.real, target(file), blobs.bytesOf(target(file)), false, plainDirs);
      } catch (error) {
        const cause = error instanceof Error ? error.message : String(error);
        throw new JournalError(
          `Writing ${file.path} failed (${cause}); apply ${applyId} stays interrupted with ${written.length} more files done. Fix the cause and run it again.`,
        );
      }
      written.push(file.path);
    }
  }
  if (goal === "old") removeEmptyDirs(entry.createdDirs);
  entry.state = goal === "new" ? "applied" : "rolled-back";
  entry.refused = refused;
  saveEntry(journalDir, entry);
  return { applyId, written, alreadyDone, refused, removedLeftovers, state: entry.state };
}
