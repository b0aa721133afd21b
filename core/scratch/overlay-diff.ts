import { fstatSync, lstatSync, readdirSync, readlinkSync, type Stats } from "node:fs";
import { join } from "node:path";
import {
  readChange,
  sameAsView,
  unreadableDirectory,
  type Budget,
  type DiffCaps,
  type ScratchChange,
} from "./read-change.ts";
import { inDir } from "./in-dir.ts";
import { entrySig } from "./record.ts";
import { readOpaque, sameUpper, upperEntry, type UpperEntry } from "./overlay.ts";
import type { EntrySig, Scratch } from "./types.ts";
import { ScratchError } from "../errors/scratch-error.ts";

type Kind = "file" | "link" | "other" | "dir";

/**
 * Copy-on-write diff: what the command changed is exactly the overlay's
 * upper layer, so only it is walked (its cost is what the command changed,
 * plus an lstat per entry a kept scratch holds, not the size of the tree).
 * An entry still as the baseline recorded it (same inode, size, mode and
 * times) was not touched. A whiteout (character device 0/0) deletes what
 * the command saw there (a whole directory: every entry below); a directory
 * made opaque deletes what it held and the upper one lacks; an entry is a
 * create where the command saw nothing, else compared with the staged view
 * (a copy-up with unchanged bytes and mode is no change). An entry of the
 * baseline now gone without a whiteout was deleted. `ignored` paths (build
 * output, dependencies) are reported without their bytes being read.
 */
export function diffOverlay(
  s: Scratch,
  maxBytes: number,
  caps: DiffCaps,
  ignored?: (rel: string) => boolean,
): ScratchChange[] {
  const ov = s.overlay!;
  const baseline = ov.baseline ?? new Map<string, UpperEntry>();
  const after = new Map<string, UpperEntry>();
  const gone = new Set(ov.deletions);
  const hidden = new Set(ov.hidden);
  /** True when the policy hid `rel` (or a directory above it) from the command: it was not there before. */
  const isHidden = (rel: string): boolean => {
    if (hidden.size === 0) return false;
    for (let r = rel; ; r = r.slice(0, r.lastIndexOf("/"))) {
      if (hidden.has(r)) return true;
      if (!r.includes("/")) return false;
    }
  };
  const budget: Budget = { bytes: caps.bytes, files: caps.files, caps };
  const changes: ScratchChange[] = [];
  const deleted = new Set<string>();
  const seen = new Set<string>();

  /** What the command saw at `rel` when it started: the upper layer as the baseline has it over the workspace. */
  const before = (rel: string): Kind | null => {
    if (gone.has(rel) || isHidden(rel)) return null;
    const own = baseline.get(rel);
    if (own) return own.kind === "whiteout" ? null : own.kind;
    for (let a = parentOf(rel); a !== ""; a = parentOf(a)) {
      const up = baseline.get(a);
      // Below a whiteout, a file or an opaque directory of the upper layer, nothing of the workspace shows.
      if (up && (up.kind !== "dir" || up.opaque)) return null;
    }
    return kindOf(lstatOrNull(join(ov.lower, rel)));
  };
  const del = (rel: string, kind: Kind) => {
    if (kind === "dir") {
      let names: string[] = [];
      try {
        names = s.fs.readDir(join(s.ws.root, rel)).map((e) => e.name);
      } catch {
        // nothing listable
      }
      for (const name of names) {
        const child = `${rel}/${name}`;
        const k = before(child);
        if (k) del(child, k);
      }
      return;
    }
    if (deleted.has(rel)) return;
    deleted.add(rel);
    changes.push({ rel, change: "delete", entry: kind, ...(ignored?.(rel) ? { ignored: true } : {}) });
  };
  const read = (rel: string, sig: EntrySig, change: "create" | "modify"): ScratchChange =>
    ignored?.(rel)
      ? { rel, change, entry: sig.kind, mode: sig.mode, size: sig.size, ignored: true }
      : readChange(s, rel, sig, change, maxBytes, budget);

  const walk = (path: string, rel: string): boolean =>
    inDir(path, (at, fd) => {
      let entries: string[];
      try {
        entries = readdirSync(at);
      } catch {
        throw unreadableDirectory(rel);
      }
      const present = new Set(entries);
      if (rel !== "") {
        const st = fstatSync(fd);
        const was = baseline.get(rel);
        const known = was?.kind === "dir" && was.ino === st.ino;
        // An upper directory becomes opaque only when it is made (over a whiteout): a known one keeps its mark.
        const opaque = known ? was.opaque === true : readOpaque(fd) === true;
        after.set(rel, { ...upperEntry(st), opaque });
        if (opaque && !known && before(rel) === "dir") {
          // Opaque: the entries the command saw in this directory no longer show unless the upper one has them again.
          let names: string[] = [];
          try {
            names = s.fs.readDir(join(s.ws.root, rel)).map((e) => e.name);
          } catch {
            // nothing listable
          }
          for (const name of names) {
            if (present.has(name)) continue;
            const k = before(`${rel}/${name}`);
            if (k) del(`${rel}/${name}`, k);
          }
        }
      }
      for (const name of entries) {
        const childRel = rel === "" ? name : `${rel}/${name}`;
        const child = join(at, name);
        const st = lstatOrNull(child);
        if (!st) continue;
        const own = baseline.get(childRel);
        if (st.isDirectory()) {
          const was = before(childRel);
          if (was && was !== "dir") del(childRel, was);
          // Not entered (a chmod 000): what it holds is unknown, and would stay in a kept scratch unseen.
          if (!walk(child, childRel) && lstatOrNull(child)?.isDirectory()) throw unreadableDirectory(childRel);
          continue;
        }
        const entry = upperEntry(st);
        after.set(childRel, entry);
        if (own && !own.fresh && sameUpper(own, st)) {
          if (entry.kind !== "whiteout") seen.add(childRel);
          continue; // untouched since the command started
        }
        const was = before(childRel);
        if (entry.kind === "whiteout") {
          if (was) del(childRel, was);
          continue;
        }
        seen.add(childRel);
        const sig = entrySig(st);
        if (was === "dir") del(childRel, was);
        if (!was || was === "dir") {
          changes.push(read(childRel, sig, "create"));
        } else if (was !== sig.kind) {
          del(childRel, was);
          changes.push(read(childRel, sig, "create"));
        } else if (sig.kind === "link") {
          const target = own?.kind === "link" ? null : readlinkOrNull(join(ov.lower, childRel));
          // A link the upper layer already had was replaced (its inode moved): its text may be the same.
          if (own?.kind === "link" || readlinkOrNull(child) !== target)
            changes.push({
              rel: childRel,
              change: "modify",
              entry: "link",
              ...(ignored?.(childRel) ? { ignored: true } : {}),
            });
        } else {
          const change = read(childRel, sig, "modify");
          if (change.ignored || sig.kind !== "file" || !sameAsView(s, childRel, change, sig)) changes.push(change);
        }
      }
    });
  if (!walk(ov.upper, ""))
    throw new ScratchError(
      "the command replaced the scratch's upper layer, so none of its file effects can be trusted; nothing was staged.",
    );
  for (const [rel, was] of baseline) {
    // Only in the upper layer (nothing of the workspace below it), so its deletion left no whiteout.
    if (was.kind === "dir" || was.kind === "whiteout" || seen.has(rel) || deleted.has(rel) || after.has(rel)) continue;
    if (before(rel)) del(rel, was.kind);
  }
  ov.after = after;
  return changes.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : a.change === "delete" ? -1 : 1));
}

function parentOf(rel: string): string {
  const i = rel.lastIndexOf("/");
  return i === -1 ? "" : rel.slice(0, i);
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    // Gone: null, the diff's 'not there'.
    return null;
  }
}

function readlinkOrNull(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    // Not a link (or gone): compared as such.
    return null;
  }
}

function kindOf(st: Stats | null): Kind | null {
  if (!st) return null;
  return st.isDirectory() ? "dir" : st.isFile() ? "file" : st.isSymbolicLink() ? "link" : "other";
}
