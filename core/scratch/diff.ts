import { relative } from "node:path";
import { diffOverlay } from "./overlay-diff.ts";
import { fingerprint, recordTree } from "./record.ts";
import type { EntrySig, Scratch } from "./types.ts";
import {
  type Budget,
  DIFF_CAPS,
  type DiffCaps,
  readChange,
  sameAsView,
  type ScratchChange,
  unreadableDirectory,
} from "./read-change.ts";
import { ScratchError } from "../errors/scratch-error.ts";

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
