// The search for denied entries below a directory (hiddenBelow), remembered between
// calls: a later search lstat's every directory it remembers and re-reads only those
// whose identity changed. A directory's mtime and ctime move whenever an entry is
// created, removed or renamed directly in it, and a directory put in another's place
// has another inode, so an unchanged identity means an unchanged list of names; the
// policy judges entries by path alone, so an unchanged list means unchanged answers.
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** Entries visited at most per directory searched: a kept directory with more is not shown at all (see planHiding). */
export const SCAN_LIMIT = 1_000_000;

/**
 * A directory whose mtime or ctime is this close to the clock when it was read (or
 * ahead of it) is read again next time: a change in the same tick of the file
 * system's coarse clock would leave its stamps as they were ("racy git").
 */
const RACY_WINDOW_NS = 2_000_000_000n;

/** (policy key, root) pairs remembered at most; the least recently used is dropped first. */
const MAX_TREES = 32;

/** What one search found. */
export interface BelowScan {
  /** Entries below the root (not following links) the predicate denies; a denied directory is listed, not entered. */
  denied: string[];
  /** False when the search stopped at the limit: entries beyond it were not looked at. */
  complete: boolean;
  /** Entries visited. */
  entries: number;
  /** Directories listed (readdir) in this search. */
  dirsRead: number;
  /** Directories whose remembered listing was reused after an lstat showed them unchanged. */
  dirsReused: number;
}

/** One directory as last read: its identity then, and what it holds directly. */
interface ScannedDir {
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  /** Its stamps were too close to the clock to vouch for the listing: read it again next time. */
  racy: boolean;
  /** Number of entries in it. */
  entries: number;
  /** Its entries the predicate denies (full paths). */
  denied: string[];
  /** Its subdirectories (not links) the predicate does not deny (full paths): searched in turn. */
  subdirs: string[];
}

/** Options of a ScanCache; tests shorten the racy window to reach the lstat comparison itself. */
export interface ScanCacheOptions {
  /** See RACY_WINDOW_NS (default 2 s). */
  racyWindowNs?: bigint;
  /** The wall clock in nanoseconds, as file stamps count (default Date.now(), rounded up). */
  nowNs?: () => bigint;
}

/** The clock read against the stamps, rounded up to the millisecond: stamps have nanoseconds. */
const wallClockNs = () => (BigInt(Date.now()) + 1n) * 1_000_000n;

/** How a directory's stamps are judged: too fresh (within `windowNs` of `now()`) to vouch for its listing. */
interface Freshness {
  windowNs: bigint;
  now: () => bigint;
}

/** Remembered searches, per policy key and root directory. */
export class ScanCache {
  private readonly trees = new Map<string, Map<string, ScannedDir>>();
  private readonly freshness: Freshness;

  constructor(options: ScanCacheOptions = {}) {
    this.freshness = { windowNs: options.racyWindowNs ?? RACY_WINDOW_NS, now: options.nowNs ?? wallClockNs };
  }

  /**
   * Entries below `root` that `hidden` denies, as `hiddenBelow` finds them. `key` must name
   * `hidden` exactly: two calls with the same key must pass predicates that answer alike
   * for every path (a listing remembered under one key never answers for another).
   */
  below(root: string, key: string, hidden: (real: string) => boolean, limit = SCAN_LIMIT): BelowScan {
    const id = `${key}\0${root}`;
    const old = this.trees.get(id);
    this.trees.delete(id);
    const fresh = new Map<string, ScannedDir>();
    const result = walk(root, hidden, limit, old, fresh, this.freshness);
    // A root that is a link is searched through it, unremembered: its target can change while the link does not.
    if (fresh.size > 0) {
      this.trees.set(id, fresh);
      while (this.trees.size > MAX_TREES) this.trees.delete(this.trees.keys().next().value!);
    }
    return result;
  }

  /** Forgets everything. */
  clear(): void {
    this.trees.clear();
  }
}

/** The process's cache, used by planHiding. */
export const scanCache = new ScanCache();

/** Searches below `root` without remembering anything (the reference the cache must agree with). */
export function scanBelow(root: string, hidden: (real: string) => boolean, limit = SCAN_LIMIT): BelowScan {
  return walk(root, hidden, limit, undefined, null, null);
}

function walk(
  root: string,
  hidden: (real: string) => boolean,
  limit: number,
  old: Map<string, ScannedDir> | undefined,
  fresh: Map<string, ScannedDir> | null,
  freshness: Freshness | null,
): BelowScan {
  const out: BelowScan = { denied: [], complete: true, entries: 0, dirsRead: 0, dirsReused: 0 };
  const rootIsDir = fresh !== null && lstatId(root)?.dir === true;
  const stack = [root];
  while (stack.length > 0) {
    if (out.entries >= limit) {
      out.complete = false;
      break;
    }
    const dir = stack.pop()!;
    let node: ScannedDir;
    if (fresh === null || !rootIsDir) {
      node = read(dir, hidden, null, null);
      out.dirsRead++;
    } else {
      // Identity first, listing after: a change between the two shows as a new identity next time.
      const id = lstatId(dir);
      if (id === null || !id.dir) continue; // gone, or no longer a directory: nothing below it
      const prev = old?.get(dir);
      if (prev && !prev.racy && sameIdentity(prev, id)) {
        node = prev;
        out.dirsReused++;
      } else {
        node = read(dir, hidden, id, freshness);
        out.dirsRead++;
      }
      fresh.set(dir, node);
    }
    out.entries += node.entries;
    for (const p of node.denied) out.denied.push(p);
    for (const p of node.subdirs) stack.push(p);
  }
  return out;
}

interface Identity {
  dir: boolean;
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

function sameIdentity(a: ScannedDir, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

function lstatId(p: string): Identity | null {
  try {
    const st = lstatSync(p, { bigint: true });
    return { dir: st.isDirectory(), dev: st.dev, ino: st.ino, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs };
  } catch {
    return null;
  }
}

/** Lists `dir` and judges its entries; an unreadable directory holds nothing the command could read either. */
function read(
  dir: string,
  hidden: (real: string) => boolean,
  id: Identity | null,
  freshness: Freshness | null,
): ScannedDir {
  const node: ScannedDir = {
    dev: id?.dev ?? 0n,
    ino: id?.ino ?? 0n,
    mtimeNs: id?.mtimeNs ?? 0n,
    ctimeNs: id?.ctimeNs ?? 0n,
    racy: true,
    entries: 0,
    denied: [],
    subdirs: [],
  };
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return node;
  }
  // The clock after the listing: a change after it in the stamps' own tick would not move them.
  if (id !== null && freshness !== null) {
    const now = freshness.now();
    node.racy = now - id.mtimeNs < freshness.windowNs || now - id.ctimeNs < freshness.windowNs;
  }
  node.entries = entries.length;
  for (const e of entries) {
    const p = join(dir, e.name);
    if (hidden(p)) node.denied.push(p);
    else if (e.isDirectory()) node.subdirs.push(p);
  }
  return node;
}
