import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { join, relative } from "node:path";
import { diffOverlay } from "./overlay-diff.ts";
import { fingerprint, recordTree } from "./record.ts";
import { ScratchError, type EntrySig, type Scratch } from "./types.ts";

/** One file-level effect of the command found by diffScratch. */
export interface ScratchChange {
  /** Workspace-relative path. */
  rel: string;
  change: "create" | "modify" | "delete";
  /** What is there now (for create/modify) or was there (for delete). */
  entry: "file" | "link" | "other";
  /** New content of a created or modified file, when within the byte cap. */
  bytes?: Uint8Array;
  /** New permission bits of a created or modified file. */
  mode?: number;
  /** Size of a created or modified file (also when its bytes were not read). */
  size?: number;
  /** Why a created or modified file's bytes were not read although within the per-file cap (per-run cap, swapped while read, vanished, left unreadable); it must not be staged. */
  unread?: string;
  /** In an ignored tree (build output, dependencies): never staged, its bytes not read. */
  ignored?: boolean;
}

/** Per-run limits of diffScratch: what a command can make Pencil read into memory. */
export interface DiffCaps {
  /** Total bytes of changed files read (default 64 MiB). */
  bytes: number;
  /** Changed files read (default 5 000). */
  files: number;
}

/** The default per-run limits of diffScratch. */
export const DIFF_CAPS: DiffCaps = { bytes: 64 * 1024 * 1024, files: 5000 };

/** A change to a real shared directory that went through a plain-mode link. */
export interface SharedLeak {
  /** Workspace-relative path (inside the shared directory). */
  rel: string;
  change: "create" | "modify" | "delete";
}

/**
 * Compares the copy with its baseline. An entry counts as touched when its
 * inode, size, mode, mtime or ctime moved (settleClock made sure any later
 * write moves the ctime); a touched file is then compared byte for byte with
 * the staged view, so a rewrite with identical content is no change. Files
 * over `maxBytes` are reported with their size but without their bytes; past
 * `caps` the rest are reported without their bytes and with `unread` set.
 * Nothing is followed out of the copy: directories are entered and files read
 * only when they are what the walk recorded (no links, FIFOs or devices).
 * Throws a ScratchError when the copy's root is no longer a directory.
 */
export function diffScratch(
  s: Scratch,
  maxBytes: number,
  caps: DiffCaps = DIFF_CAPS,
  ignored?: (rel: string) => boolean,
): ScratchChange[] {
  if (s.overlay) return diffOverlay(s, maxBytes, caps, ignored);
  const now = new Map<string, EntrySig>();
  const unreadable: string[] = [];
  if (!recordTree(s.dir, now, unreadable))
    throw new ScratchError(
      "the command replaced the scratch copy's root directory, so none of its file effects can be trusted; nothing was staged.",
    );
  if (unreadable.length > 0) throw unreadableDirectory(unreadable[0]!);
  const budget: Budget = { bytes: caps.bytes, files: caps.files, caps };
  const changes: ScratchChange[] = [];
  for (const [rel, before] of s.baseline) {
    const after = now.get(rel);
    if (!after) changes.push({ rel, change: "delete", entry: before.kind });
    else if (after.kind !== before.kind) {
      changes.push({ rel, change: "delete", entry: before.kind });
      changes.push(readChange(s, rel, after, "create", maxBytes, budget));
    }
  }
  for (const [rel, after] of now) {
    const before = s.baseline.get(rel);
    if (!before) {
      changes.push(readChange(s, rel, after, "create", maxBytes, budget));
      continue;
    }
    if (before.kind !== after.kind) continue;
    const moved =
      before.ino !== after.ino ||
      before.size !== after.size ||
      before.mode !== after.mode ||
      before.mtimeMs !== after.mtimeMs ||
      before.ctimeMs !== after.ctimeMs;
    if (!moved) continue;
    const change = readChange(s, rel, after, "modify", maxBytes, budget);
    if (after.kind !== "file" || !sameAsView(s, rel, change, after)) {
      changes.push(change);
    }
  }
  return changes.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : a.change === "delete" ? -1 : 1));
}

/**
 * The refusal when the command left a directory Pencil cannot list: what it holds is unknown, and would otherwise be
 * taken for deleted (or, in a kept scratch, kept unseen for the next command).
 */
export function unreadableDirectory(rel: string): ScratchError {
  return new ScratchError(
    `the command left the directory ${rel === "" ? "." : rel} unreadable (its permissions), so what it holds cannot be told; nothing was staged. Give directories their read permission back (chmod u+rx) before the command ends.`,
  );
}

/** Plain mode: what changed in the real shared directories since the copy was made (writes that went through the links). */
export function sharedLeaks(s: Scratch): SharedLeak[] {
  if (s.share !== "plain" || s.shared.length === 0) return [];
  const now = new Map<string, string>();
  for (const sd of s.shared) fingerprint(sd.real, now);
  const leaks: SharedLeak[] = [];
  const rel = (p: string) => relative(s.ws.root, p);
  for (const [path, sig] of s.sharedPrints) {
    const after = now.get(path);
    if (after === undefined) leaks.push({ rel: rel(path), change: "delete" });
    else if (after !== sig) leaks.push({ rel: rel(path), change: "modify" });
  }
  for (const path of now.keys()) if (!s.sharedPrints.has(path)) leaks.push({ rel: rel(path), change: "create" });
  return leaks.sort((a, b) => (a.rel < b.rel ? -1 : 1));
}

/** The budget left of a diffScratch run's DiffCaps. */
export interface Budget {
  bytes: number;
  files: number;
  caps: DiffCaps;
}

/** A created or modified entry, its bytes read (from the overlay's upper layer, or the copy) within `maxBytes` and the budget. */
export function readChange(
  s: Scratch,
  rel: string,
  sig: EntrySig,
  change: "create" | "modify",
  maxBytes: number,
  budget: Budget,
): ScratchChange {
  const out: ScratchChange = { rel, change, entry: sig.kind };
  if (sig.kind !== "file") return out;
  out.mode = sig.mode;
  out.size = sig.size;
  if (sig.size > maxBytes) return out;
  if (budget.files <= 0 || sig.size > budget.bytes) {
    const { files, bytes } = budget.caps;
    out.unread = `the command changed more than the ${files} files or ${bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MiB` : `${bytes} bytes`} read back per run, over the per-run cap; run a narrower command`;
    return out;
  }
  budget.files -= 1;
  budget.bytes -= sig.size;
  const read = readRecorded(join(s.overlay?.upper ?? s.dir, rel), sig, maxBytes);
  if (typeof read === "string") out.unread = read;
  else out.bytes = read;
  return out;
}

/**
 * Reads a file of the copy only when it is the regular file the walk
 * recorded (same device and inode, opened without following a link and
 * without blocking on a FIFO); otherwise the reason it was not read, in the
 * words the model reads after "Not staged: <path>, because".
 */
function readRecorded(path: string, sig: EntrySig, maxBytes: number): Uint8Array | string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return notRead((error as NodeJS.ErrnoException).code);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.dev !== sig.dev || st.ino !== sig.ino)
      return "it was replaced (by a link or special file) after the command ran";
    if (st.size > maxBytes) return `it grew past the ${maxBytes}-byte limit per file while being read`;
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } catch (error) {
    return notRead((error as NodeJS.ErrnoException).code);
  } finally {
    closeSync(fd);
  }
}

/** Why a changed file could not be read back, by the error its open or read met. */
function notRead(code: string | undefined): string {
  if (code === "ENOENT")
    return "it vanished after the command changed it, before it could be read (something the command started removed it)";
  if (code === "EACCES" || code === "EPERM")
    return "the command left it unreadable (its permissions), so its content cannot be staged; give it read permission back (chmod u+r) before the command ends";
  if (code === "ELOOP") return "it was replaced (by a link or special file) after the command ran";
  return `it could not be read back (${code ?? "unknown error"})`;
}

/** True when the copy's (or upper layer's) file has the staged view's content and mode: touched, but not changed. */
export function sameAsView(s: Scratch, rel: string, change: ScratchChange, sig: EntrySig): boolean {
  const real = join(s.ws.root, rel);
  let st;
  try {
    st = s.fs.stat(real);
  } catch {
    // Unreadable in the staged view: not the same, so the change is reported.
    return false;
  }
  if (!st || st.kind !== "file" || st.mode !== sig.mode || st.size !== sig.size || !change.bytes) return false;
  try {
    return Buffer.compare(Buffer.from(s.fs.readBytes(real)), Buffer.from(change.bytes)) === 0;
  } catch {
    // Unreadable in the staged view: not the same, so the change is reported.
    return false;
  }
}
