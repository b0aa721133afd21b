import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { FileChange } from "../staging/changeset.ts";
import type { FileImage } from "./file-image.ts";
import { writeFileAtomic } from "../file-ops.ts";
import { sha256 } from "../hash.ts";
import { parseStateJson, readStateText } from "../state-file.ts";
import { JournalError } from "../errors/journal-error.ts";

/**
 * The apply journal. One directory per apply under the journal directory, named by
 * its apply id (sortable by time):
 *   <applyId>/blobs.pack   every before- and after-content the apply needs, each once
 *   <applyId>/entry.json   the entry: files with before/after images, state, blob index
 * The pack is written and fsynced before entry.json exists, so an entry that can be
 * read always has its blobs. A directory without entry.json is an apply killed while
 * journalling, before any file was touched; it is ignored.
 */

/** Lifecycle of a journal entry: `applying` until every file is written, `undoing` while an undo writes; what undo and recovery leave behind. */
type JournalState = "applying" | "applied" | "rolled-back" | "undoing" | "undone" | "partially-undone";

/** A file an apply may touch: what was there before (checked against the changeset's base) and what the apply writes. */
export interface JournalFile {
  path: string;
  real: string;
  kind: FileChange["kind"];
  before: FileImage;
  after: FileImage;
}

/** A file an operation did not touch, and why (shown to the user). */
export interface RefusedFile {
  path: string;
  reason: string;
}

/** One apply as recorded on disk. */
export interface JournalEntry {
  version: 1;
  applyId: string;
  changesetId: string;
  changesetDigest: string;
  workspace: string;
  goal: string;
  createdAt: string;
  updatedAt: string;
  state: JournalState;
  /** The files written, in write order (deletes last). */
  files: JournalFile[];
  /** Directories the apply created (absent before), removed again by undo or rollback when empty. */
  createdDirs: string[];
  /** Approved files not written at apply because the disk had changed. */
  conflicts: RefusedFile[];
  /** Files the last undo, finish or rollback left alone, and why. */
  refused: RefusedFile[];
  /** Why an apply that failed mid-way was rolled back, when it was. */
  error?: string;
  /** Content hash → [offset, length] in blobs.pack. */
  blobs: Record<string, [number, number]>;
}

const ENTRY_FILE = "entry.json";
const PACK_FILE = "blobs.pack";
// Named for its first use; it marks every state in which files are being written (see IN_PROGRESS).
const APPLYING_MARKER = "applying";
const IN_PROGRESS: ReadonlySet<JournalState> = new Set(["applying", "undoing"]);
const ID_PATTERN = /^\d{8}T\d{9}Z-\d{4}-[0-9a-f]{6}$/;

let lastStamp = "";
let sequence = 0;

/** A new apply id: UTC time to the millisecond, a per-process sequence and a random tag; ids sort by creation time. */
export function newApplyId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:.]/g, "");
  sequence = stamp === lastStamp ? sequence + 1 : 0;
  lastStamp = stamp;
  return `${stamp}-${String(sequence).padStart(4, "0")}-${randomBytes(3).toString("hex")}`;
}

/**
 * Writes a new entry (state as given, normally `applying`) with its blobs, and
 * makes it durable: pack fsynced, entry.json fsynced, both directories fsynced.
 * Returns the entry with its blob index filled in.
 */
export function createEntry(
  journalDir: string,
  entry: Omit<JournalEntry, "blobs">,
  blobs: ReadonlyMap<string, Uint8Array>,
): JournalEntry {
  mkdirSync(journalDir, { recursive: true, mode: 0o700 });
  const dir = join(journalDir, entry.applyId);
  // Not recursive: an id collision (two processes, same millisecond, same tag) must fail, not share a directory.
  mkdirSync(dir, { mode: 0o700 });
  try {
    const index: Record<string, [number, number]> = {};
    const fd = openSync(join(dir, PACK_FILE), "w", 0o600);
    try {
      let offset = 0;
      for (const [hash, bytes] of blobs) {
        let done = 0;
        while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
        index[hash] = [offset, bytes.length];
        offset += bytes.length;
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const full: JournalEntry = { ...entry, blobs: index };
    writeEntryFile(dir, full);
    fsyncDir(dir);
    fsyncDir(journalDir);
    return full;
  } catch (error) {
    // No file was touched yet: a journal that could not be written whole (a full disk) is removed, not left to fill it.
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Rewrites an entry atomically and durably with a new state (and whatever else changed), stamping `updatedAt`. */
export function saveEntry(journalDir: string, entry: JournalEntry): void {
  entry.updatedAt = new Date().toISOString();
  const dir = join(journalDir, entry.applyId);
  writeEntryFile(dir, entry);
  fsyncDir(dir);
}

/** Reads one entry; throws JournalError when it is missing or unreadable. */
export function readEntry(journalDir: string, applyId: string): JournalEntry {
  // An id is one path component of the journal: never let it climb out (`..`, `/`).
  if (!/^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(applyId) || applyId.includes("..")) {
    throw new JournalError(
      `${applyId} is not an apply id: list the journal (pencil recover, pencil log) for valid ids.`,
    );
  }
  const file = join(journalDir, applyId, ENTRY_FILE);
  const missing = () =>
    new JournalError(`No journal entry ${applyId} in ${journalDir}: list the journal (pencil log) for valid ids.`);
  const text = readStateText(file, missing);
  if (text === null) throw missing();
  const parsed = parseStateJson(
    text,
    () =>
      new JournalError(
        `Journal entry ${file} is not valid JSON: move that directory out of ${journalDir} and try again.`,
      ),
  );
  const e = parsed as Partial<JournalEntry>;
  if (
    e.version !== 1 ||
    e.applyId !== applyId ||
    !Array.isArray(e.files) ||
    typeof e.state !== "string" ||
    typeof e.blobs !== "object"
  ) {
    throw new JournalError(
      `Journal entry ${file} is not a Pencil journal entry (version 1): move that directory out of ${journalDir} and try again.`,
    );
  }
  return e as JournalEntry;
}

/** Ids of the entries, newest first. Directories without entry.json (killed before any file was touched) are skipped. */
export function entryIds(journalDir: string): string[] {
  if (!existsSync(journalDir)) return [];
  return readdirSync(journalDir)
    .filter((name) => ID_PATTERN.test(name) && existsSync(join(journalDir, name, ENTRY_FILE)))
    .sort()
    .reverse();
}

/** Every entry, newest first. */
export function listEntries(journalDir: string): JournalEntry[] {
  return entryIds(journalDir).map((id) => readEntry(journalDir, id));
}

/** The newest entry `accept` takes, reading entries only until it is found; undefined when none is. */
export function findEntry(journalDir: string, accept: (entry: JournalEntry) => boolean): JournalEntry | undefined {
  for (const id of entryIds(journalDir)) {
    const entry = readEntry(journalDir, id);
    if (accept(entry)) return entry;
  }
  return undefined;
}

/** What `log` and `undo` need to know about one apply. */
export interface JournalSummary {
  applyId: string;
  changesetId: string;
  goal: string;
  workspace: string;
  /** When the apply started (ISO 8601). */
  time: string;
  state: JournalState;
  /** Paths written by the apply. */
  files: string[];
  conflicts: RefusedFile[];
  refused: RefusedFile[];
}

/** The journal, newest apply first. */
export function listJournal(journalDir: string): JournalSummary[] {
  return listEntries(journalDir).map((e) => ({
    applyId: e.applyId,
    changesetId: e.changesetId,
    goal: e.goal,
    workspace: e.workspace,
    time: e.createdAt,
    state: e.state,
    files: e.files.map((f) => f.path),
    conflicts: e.conflicts,
    refused: e.refused,
  }));
}

/** Reads an entry's blobs on demand, verifying each against its hash before it is used to restore anything. */
class BlobReader {
  private pack: Uint8Array | null = null;
  private readonly verified = new Set<string>();

  constructor(
    private readonly journalDir: string,
    private readonly entry: JournalEntry,
  ) {}

  /** The content of `image` (null for an absent image); throws JournalError when the journal lacks it or it is damaged. */
  bytesOf(image: FileImage): Uint8Array | null {
    if (!image.exists) return null;
    const slot = this.entry.blobs[image.hash];
    const packFile = join(this.journalDir, this.entry.applyId, PACK_FILE);
    if (!slot) throw new JournalError(`journal entry ${this.entry.applyId} has no content for hash ${image.hash}`);
    try {
      this.pack ??= readFileSync(packFile);
    } catch (error) {
      throw new JournalError(`${packFile} cannot be read (${(error as Error).message})`);
    }
    const bytes = this.pack.subarray(slot[0], slot[0] + slot[1]);
    if (!this.verified.has(image.hash)) {
      if (bytes.length !== slot[1] || sha256(bytes) !== image.hash) {
        throw new JournalError(`${packFile} is damaged (the content for ${image.hash} does not match its hash)`);
      }
      this.verified.add(image.hash);
    }
    return bytes;
  }
}

/**
 * Writes entry.json, keeping an `applying` marker beside it exactly while the entry
 * may say `applying` or `undoing` (created before such a write, removed after any other), so the
 * check every command makes at start-up looks at marked entries only, not the whole journal.
 */
function writeEntryFile(dir: string, entry: JournalEntry): void {
  const marker = join(dir, APPLYING_MARKER);
  if (IN_PROGRESS.has(entry.state)) writeFileSync(marker, "", { mode: 0o600 });
  writeFileAtomic(join(dir, ENTRY_FILE), new TextEncoder().encode(JSON.stringify(entry, null, 1) + "\n"), 0o600, true);
  if (!IN_PROGRESS.has(entry.state)) rmSync(marker, { force: true });
}

/** Entries that may still be `applying` or `undoing` (an apply or undo killed mid-way), newest first: only those carrying the marker are read. */
export function markedInProgress(journalDir: string): JournalEntry[] {
  return entryIds(journalDir)
    .filter((id) => existsSync(join(journalDir, id, APPLYING_MARKER)))
    .map((id) => readEntry(journalDir, id));
}

/**
 * Loads the content of every image an operation is about to write, verified, before
 * it writes anything: a damaged journal then changes nothing, and the error names the
 * entry's directory to move aside.
 */
export function verifiedBlobs(
  journalDir: string,
  entry: JournalEntry,
  images: readonly FileImage[],
): Map<string, Uint8Array> {
  const reader = new BlobReader(journalDir, entry);
  const out = new Map<string, Uint8Array>();
  for (const image of images) {
    if (!image.exists || out.has(image.hash)) continue;
    try {
      out.set(image.hash, reader.bytesOf(image)!);
    } catch (error) {
      const dir = join(journalDir, entry.applyId);
      throw new JournalError(
        `Journal entry ${entry.applyId} is damaged: ${(error as Error).message}. Nothing was changed. ` +
          `Move it aside (mv ${dir} ${dir}.damaged) so other commands can go on; the files it wrote stay as they are, restore them by hand if you need their old content.`,
      );
    }
  }
  return out;
}

/** Makes a directory's entries (new names, renames) durable; a no-op where directories cannot be opened. */
export function fsyncDir(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch {
    // A directory that cannot be opened cannot be synced; the rename it holds was made, and durability is best effort here.
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some platforms (and file systems) refuse fsync on a directory; the file fsyncs still hold.
  } finally {
    closeSync(fd);
  }
}
