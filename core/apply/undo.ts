import { rmSync } from "node:fs";
import { faultPoint } from "../fault-point.ts";
import { spaceProblem } from "./free-space.ts";
import {
  type DiskFile,
  type FileImage,
  placeImage,
  readDiskFile,
  removeEmptyDirs,
  sameImage,
  tempLeftovers,
} from "./file-image.ts";
import {
  entryIds,
  findEntry,
  type JournalEntry,
  type JournalFile,
  readEntry,
  type RefusedFile,
  saveEntry,
  verifiedBlobs,
} from "./journal.ts";
import { UndoError } from "../errors/undo-error.ts";
/** What an undo did: the files now back to their before-image, the files it left alone (and why), and the entry's new state. */
export interface UndoResult {
  applyId: string;
  changesetId: string;
  reverted: string[];
  refused: RefusedFile[];
  state: "undone" | "partially-undone";
}

/**
 * Reverts an applied entry from its before-images. `ref` is an apply id or a
 * changeset id; without it, the newest applied entry. A file edited since the apply
 * is refused (and kept as it is) while the others revert; files the apply created
 * are deleted, and directories it created are removed when empty. Re-running it on
 * a `partially-undone` entry retries the refused files; files already back to
 * their before-image count as reverted, so an undo killed mid-way can be re-run (or
 * settled with `pencil recover`, which reports it). Every content it will write is
 * verified against its hash before the first write.
 */
export function undoApply(journalDir: string, ref?: string, workspace?: string): UndoResult {
  const entry = findTarget(journalDir, ref, workspace);
  const reverted: string[] = [];
  const refused: RefusedFile[] = [];
  const toWrite: JournalFile[] = [];
  for (const file of entry.files) {
    const disk = readDiskFile(file.real);
    if (sameImage(file.before, disk)) reverted.push(file.path);
    // Same content is not enough: an owner's chmod since the apply is a change to keep too.
    else if (!sameImage(file.after, disk)) refused.push({ path: file.path, reason: editedReason(file, disk) });
    else toWrite.push(file);
  }
  // Everything the undo writes is read and verified before the first write: a damaged journal changes nothing.
  const blobs = verifiedBlobs(
    journalDir,
    entry,
    toWrite.map((f) => f.before),
  );
  const space = spaceProblem(
    toWrite.map((f) => ({ real: f.real, beforeSize: sizeOf(f.after), afterSize: sizeOf(f.before) })),
    [],
  );
  if (space) throw new UndoError(`Nothing was undone: ${space}. Free some space, then undo again.`);
  // Journaled like an apply: killed mid-way, the entry says `undoing` and recovery finishes or rolls it back.
  if (toWrite.length > 0) {
    entry.state = "undoing";
    saveEntry(journalDir, entry);
  }
  for (const leftover of tempLeftovers(entry.files.map((f) => f.real))) rmSync(leftover, { force: true });
  // Files the apply created are deleted last, so their directories can go too.
  const order = [...toWrite].sort((a, b) => Number(!a.before.exists) - Number(!b.before.exists));
  const plainDirs = new Set<string>();
  for (const file of order) {
    try {
      placeImage(file.real, file.before, file.before.exists ? blobs.get(file.before.hash)! : null, false, plainDirs);
      reverted.push(file.path);
      faultPoint("file-placed", file.path);
    } catch (error) {
      refused.push({
        path: file.path,
        reason: `could not be restored (${error instanceof Error ? error.message : String(error)}); fix that and undo again`,
      });
    }
  }
  removeEmptyDirs(entry.createdDirs);
  entry.state = refused.length === 0 ? "undone" : "partially-undone";
  entry.refused = refused;
  saveEntry(journalDir, entry);
  return { applyId: entry.applyId, changesetId: entry.changesetId, reverted, refused, state: entry.state };
}

/** The entry `ref` names (apply id first, then the newest entry of that changeset id), or the newest undoable one. */
function findTarget(journalDir: string, ref: string | undefined, workspace: string | undefined): JournalEntry {
  // An undo that was interrupted is undone again: that finishes it.
  const undoable = (e: JournalEntry) =>
    e.state === "applied" || e.state === "partially-undone" || e.state === "undoing";
  if (ref === undefined) {
    // Without an id, only this workspace's applies are candidates: undo never reaches into another project.
    const latest = findEntry(journalDir, (e) => undoable(e) && (workspace === undefined || e.workspace === workspace));
    if (!latest)
      throw new UndoError(
        `Nothing to undo: no applied changeset${workspace ? ` for ${workspace}` : ""} in the journal.`,
      );
    return latest;
  }
  const found = findTargetById(journalDir, ref, undoable);
  if (workspace !== undefined && found.workspace !== workspace) {
    throw new UndoError(
      `Apply ${found.applyId} (changeset ${found.changesetId}) was made in ${found.workspace}, not ${workspace}: run pencil undo ${ref} -w ${found.workspace}.`,
    );
  }
  return found;
}

function findTargetById(journalDir: string, ref: string, undoable: (e: JournalEntry) => boolean): JournalEntry {
  const byApply = entryIds(journalDir).includes(ref) ? readEntry(journalDir, ref) : undefined;
  const target = byApply ?? findEntry(journalDir, (e) => e.changesetId === ref && undoable(e));
  if (target && undoable(target)) return target;
  const newest = target ?? findEntry(journalDir, (e) => e.changesetId === ref);
  if (!newest)
    throw new UndoError(`No apply or changeset with id ${ref} in the journal: run pencil log to see the ids.`);
  const what = `Apply ${newest.applyId} (changeset ${newest.changesetId})`;
  switch (newest.state) {
    case "undone":
      throw new UndoError(`${what} was already undone at ${newest.updatedAt}; nothing to do.`);
    case "rolled-back":
      throw new UndoError(`${what} was rolled back at ${newest.updatedAt}; nothing to undo.`);
    default:
      throw new UndoError(
        `${what} was interrupted before it finished: finish it or roll it back instead of undoing it.`,
      );
  }
}

function editedReason(file: JournalFile, disk: DiskFile): string {
  const keep = "undo refused for this file to keep that change; revert it by hand if you want";
  if (disk.kind === "other") return `is now ${disk.what} on disk; ${keep}`;
  if (!file.after.exists) return `was created again since the apply (which deleted it); ${keep}`;
  if (disk.kind === "absent") return `was deleted since the apply; ${keep}`;
  if (file.after.exists && disk.kind === "file" && disk.hash === file.after.hash)
    return `had its permissions changed since the apply; ${keep}`;
  return `was edited since the apply; ${keep}`;
}

function sizeOf(image: FileImage): number {
  return image.exists ? image.size : 0;
}
