// What a command changed, read back safely: one entry's bytes within the caps, never through a link it left.
import { formatBytes } from "../format-bytes.ts";
import { join } from "node:path";
import type { EntrySig, Scratch } from "./types.ts";
import { ScratchError } from "../errors/scratch-error.ts";
import { readSmallFile } from "../read-small-file.ts";

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

/**
 * The refusal when the command left a directory Pencil cannot list: what it holds is unknown, and would otherwise be
 * taken for deleted (or, in a kept scratch, kept unseen for the next command).
 */
export function unreadableDirectory(rel: string): ScratchError {
  return new ScratchError(
    `the command left the directory ${rel === "" ? "." : rel} unreadable (its permissions), so what it holds cannot be told; nothing was staged. Give directories their read permission back (chmod u+rx) before the command ends.`,
  );
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
    out.unread = `the command changed more than the ${files} files or ${formatBytes(bytes)} read back per run, over the per-run cap; run a narrower command`;
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
  const read = readSmallFile(path, maxBytes);
  if ("failed" in read) return notRead(read.failed);
  if (("refused" in read && read.refused === "not-a-file") || read.stat.dev !== sig.dev || read.stat.ino !== sig.ino)
    return "it was replaced (by a link or special file) after the command ran";
  if ("refused" in read) return `it grew past the ${maxBytes}-byte limit per file while being read`;
  return read.bytes;
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
