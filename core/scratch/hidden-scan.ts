import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isInside, realPathLoose } from "../workspace.ts";

/** One directory of the workspace as the scan last read it. */
interface ScannedDir {
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  /** Read again next time whatever its times say: it changed too close to the read for its times to tell. */
  racy: boolean;
  /** Names of the visible subdirectories (entered). */
  subdirs: string[];
  /** Names of the entries the policy hides (a hidden directory is not entered; a link is hidden when what it leads to is). */
  hidden: string[];
}

/** Directories changed this close (ms) before a read are read again next time: a coarse clock could hide a later change. */
const RACY_MS = 2000;

/**
 * The entries of the workspace the policy hides, found by a walk that is
 * kept for the run: the next scan re-reads only the directories whose inode,
 * mtime or ctime moved (an entry added, removed or renamed moves them), so a
 * `.env` the owner creates mid-run is found by an lstat per directory, not a
 * walk of every file.
 */
export class HiddenScan {
  private dirs = new Map<string, ScannedDir>();
  /** Directories read (not only looked at) by the last scan. */
  lastRead = 0;

  constructor(private readonly root: string) {}

  /**
   * Workspace-relative paths of the entries `visible` refuses, sorted.
   * Directories not read again keep the verdicts of the scan that read them
   * (the policy does not change within a run).
   */
  scan(visible: (real: string) => boolean, linkVisible: (real: string) => boolean = visible): string[] {
    const next = new Map<string, ScannedDir>();
    const hidden: string[] = [];
    this.lastRead = 0;
    const visit = (rel: string) => {
      const real = rel === "" ? this.root : join(this.root, rel);
      let st;
      try {
        st = lstatSync(real);
      } catch {
        // Gone meanwhile: nothing to hide.
        return;
      }
      if (!st.isDirectory()) return;
      let dir = this.dirs.get(rel);
      if (!dir || dir.racy || dir.ino !== st.ino || dir.mtimeMs !== st.mtimeMs || dir.ctimeMs !== st.ctimeMs) {
        const started = Date.now();
        dir = read(real, st.ino, st.mtimeMs, st.ctimeMs, visible, linkVisible, this.root);
        dir.racy = Math.max(st.mtimeMs, st.ctimeMs) > started - RACY_MS;
        this.lastRead++;
      }
      next.set(rel, dir);
      for (const name of dir.hidden) hidden.push(rel === "" ? name : `${rel}/${name}`);
      for (const name of dir.subdirs) visit(rel === "" ? name : `${rel}/${name}`);
    };
    visit("");
    this.dirs = next;
    return hidden.sort();
  }
}

function read(
  real: string,
  ino: number,
  mtimeMs: number,
  ctimeMs: number,
  visible: (real: string) => boolean,
  linkVisible: (real: string) => boolean,
  top: string,
): ScannedDir {
  const dir: ScannedDir = { ino, mtimeMs, ctimeMs, racy: false, subdirs: [], hidden: [] };
  let entries;
  try {
    entries = readdirSync(real, { withFileTypes: true });
  } catch {
    // Unreadable to Pencil: nothing below it is listed, and it is not shown to the command either.
    return dir;
  }
  for (const e of entries) {
    const path = join(real, e.name);
    if (e.isSymbolicLink()) {
      // As a copy leaves it out: a link to what the policy hides (a link loop leads nowhere and stays).
      let target: string | null = null;
      try {
        target = realPathLoose(path).real;
      } catch {
        // a loop
      }
      // One leading out of the workspace stays when the command is shown its target anyway (a virtualenv's python).
      if (target !== null && !(isInside(top, target) ? visible : linkVisible)(target)) dir.hidden.push(e.name);
    } else if (!visible(path)) dir.hidden.push(e.name);
    else if (e.isDirectory()) dir.subdirs.push(e.name);
  }
  return dir;
}
