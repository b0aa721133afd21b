import { lstatSync, readdirSync, readlinkSync, type Stats } from "node:fs";
import { join } from "node:path";
import { readChange, sameAsView, type Budget, type DiffCaps, type ScratchChange } from "./diff.ts";
import { inDir } from "./in-dir.ts";
import { readOpaque } from "./overlay.ts";
import { ScratchError, type EntrySig, type Scratch } from "./types.ts";

type Kind = "file" | "link" | "other" | "dir";

/**
 * Copy-on-write diff: what the command changed is exactly the overlay's
 * upper layer, so only it is walked (its cost is what the command changed,
 * not the size of the tree). A whiteout (character device 0/0) deletes what
 * the staged view had there (a whole directory: every entry below); an opaque
 * directory deletes what the view had in it and the upper one lacks; an
 * entry is a create where the view had nothing, else compared with the view
 * (a copy-up with unchanged bytes and mode is no change). A staged file
 * placed in the upper layer and now gone without a whiteout was deleted.
 */
export function diffOverlay(s: Scratch, maxBytes: number, caps: DiffCaps): ScratchChange[] {
  const ov = s.overlay!;
  const placed = new Set(ov.placed);
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

  /** What the command saw at `rel` before it ran: the staged state over the workspace. */
  const before = (rel: string): Kind | null => {
    if (placed.has(rel)) return "file";
    if (gone.has(rel) || isHidden(rel)) return null;
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
    changes.push({ rel, change: "delete", entry: kind });
  };

  const walk = (path: string, rel: string): boolean =>
    inDir(path, (at, fd) => {
      let entries: string[];
      try {
        entries = readdirSync(at);
      } catch {
        return;
      }
      const present = new Set(entries);
      if (rel !== "" && before(rel) === "dir" && readOpaque(fd)) {
        // Opaque: the view's entries of this directory no longer show unless the upper one has them again.
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
      for (const name of entries) {
        const childRel = rel === "" ? name : `${rel}/${name}`;
        const child = join(at, name);
        const st = lstatOrNull(child);
        if (!st) continue;
        const was = before(childRel);
        if (st.isCharacterDevice() && st.rdev === 0) {
          if (was) del(childRel, was);
          continue;
        }
        if (st.isDirectory()) {
          if (was && was !== "dir") del(childRel, was);
          walk(child, childRel);
          continue;
        }
        seen.add(childRel);
        const sig = sigOf(st);
        if (was === "dir") del(childRel, was);
        if (!was || was === "dir") {
          changes.push(readChange(s, childRel, sig, "create", maxBytes, budget));
        } else if (was !== sig.kind) {
          del(childRel, was);
          changes.push(readChange(s, childRel, sig, "create", maxBytes, budget));
        } else if (sig.kind === "link") {
          if (readlinkOrNull(child) !== readlinkOrNull(join(ov.lower, childRel)))
            changes.push({ rel: childRel, change: "modify", entry: "link" });
        } else {
          const change = readChange(s, childRel, sig, "modify", maxBytes, budget);
          if (sig.kind !== "file" || !sameAsView(s, childRel, change, sig)) changes.push(change);
        }
      }
    });
  if (!walk(ov.upper, ""))
    throw new ScratchError(
      "the command replaced the scratch's upper layer, so none of its file effects can be trusted; nothing was staged.",
    );
  for (const rel of ov.placed) {
    // Made in the upper layer only, so its deletion left no whiteout.
    if (!seen.has(rel) && !deleted.has(rel) && !lstatOrNull(join(ov.upper, rel))) del(rel, "file");
  }
  return changes.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : a.change === "delete" ? -1 : 1));
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function readlinkOrNull(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

function kindOf(st: Stats | null): Kind | null {
  if (!st) return null;
  return st.isDirectory() ? "dir" : st.isFile() ? "file" : st.isSymbolicLink() ? "link" : "other";
}

function sigOf(st: Stats): EntrySig {
  return {
    kind: st.isFile() ? "file" : st.isSymbolicLink() ? "link" : "other",
    dev: st.dev,
    ino: st.ino,
    size: st.size,
    mode: st.mode & 0o7777,
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs,
  };
}
