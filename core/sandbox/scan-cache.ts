// planHiding's search for denied entries below a kept or system directory, remembered
// between calls: a later search lstat's every directory it remembers and re-reads only those
// whose identity changed. A directory's mtime and ctime move whenever an entry is
// created, removed or renamed directly in it, and a directory put in another's place
// has another inode, so an unchanged identity means an unchanged list of names; the
// policy judges entries by path alone, so an unchanged list means unchanged answers.
//
// Where Linux inotify can vouch (dir-watch.ts), a directory read under a watch that has
// seen no event since is reused without even the lstat, when its parent is vouched for
// the same way (no event in the parent: the name still leads to the same directory).
// And when every directory of a search was watched and no watch has seen anything since,
// the next search answers as the last one did after an lstat of the root alone.
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DirWatcher, dirWatcher, type WatchToken } from "./dir-watch.ts";

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
  /** Directories whose remembered listing was reused (unchanged by their lstat, or vouched for by their watch). */
  dirsReused: number;
  /** Directories lstat'ed. */
  dirsChecked: number;
}

/** One directory as last read: its identity then, and what it holds directly. */
interface ScannedDir {
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  /** Its stamps were too close to the clock to vouch for the listing: read it again next time, unless its watch vouches. */
  racy: boolean;
  /** The watch taken before it was read, or null (none: its lstat alone judges it). */
  token: WatchToken | null;
  /** Number of entries in it. */
  entries: number;
  /** Its entries the predicate denies (full paths). */
  denied: string[];
  /** Its subdirectories (not links) the predicate does not deny (full paths): searched in turn. */
  subdirs: string[];
  /** The number of the last search that reached it. */
  seen: number;
}

/** One remembered search: its directories, and its result when every one of them was watched. */
interface Tree {
  dirs: Map<string, ScannedDir>;
  /** The last result, with the watcher's count of notices and the root's identity then; null when some directory had no watch. */
  last: { changes: number; root: Identity; limit: number; result: BelowScan } | null;
  /** Searches made of it: a later watchLater job may complete `last` only for the search it follows. */
  walks?: number;
}

/** One search's directories waiting for their watches (ScanCache.watchLater), and what completes its `last` once they have them. */
interface WatchJob {
  tree: Tree;
  walks: number;
  dirs: [string, ScannedDir][];
  root: Identity;
  limit: number;
  result: BelowScan;
}

/** Options of a ScanCache; tests shorten the racy window to reach the lstat comparison itself. */
export interface ScanCacheOptions {
  /** See RACY_WINDOW_NS (default 2 s). */
  racyWindowNs?: bigint;
  /** The wall clock in nanoseconds, as file stamps count (default Date.now(), rounded up). */
  nowNs?: () => bigint;
  /** Change notices that spare lstat's (default the process's inotify watcher where there is one; null: none). */
  watcher?: DirWatcher | null;
}

/** The clock read against the stamps, rounded up to the millisecond: stamps have nanoseconds. */
const wallClockNs = () => (BigInt(Date.now()) + 1n) * 1_000_000n;

/** How a remembered directory is judged: its stamps too fresh (within `windowNs` of `now()`) to vouch for its listing; its watch. */
interface Judge {
  windowNs: bigint;
  now: () => bigint;
  watcher: DirWatcher | null;
}

/** Remembered searches, per policy key and root directory. */
export class ScanCache {
  private readonly trees = new Map<string, Tree>();
  private readonly judge: Judge;
  /** Searches saved to their index by this process. */
  private readonly saved = new Set<string>();
  /** The watcher asked for, or undefined: the process's, found at the first search (not when the module loads). */
  private readonly wanted: DirWatcher | null | undefined;

  constructor(options: ScanCacheOptions = {}) {
    this.wanted = options.watcher;
    this.judge = {
      windowNs: options.racyWindowNs ?? RACY_WINDOW_NS,
      now: options.nowNs ?? wallClockNs,
      watcher: null,
    };
  }

  /**
   * Entries below `root` that `hidden` denies, as `scanBelow` finds them. `key` must name
   * `hidden` exactly: two calls with the same key must pass predicates that answer alike
   * for every path (a listing remembered under one key never answers for another).
   */
  below(
    root: string,
    key: string,
    hidden: (real: string) => boolean,
    limit = SCAN_LIMIT,
    indexDir: string | null = null,
  ): BelowScan {
    const id = `${key}\0${root}`;
    const index =
      indexDir === null ? null : join(indexDir, `${createHash("sha256").update(id).digest("hex").slice(0, 32)}.json`);
    const fromIndex = this.trees.has(id) || index === null ? null : loadIndex(index, id);
    const tree: Tree = this.trees.get(id) ?? { dirs: fromIndex ?? new Map(), last: null };
    this.trees.delete(id);
    if (this.judge.watcher === null) this.judge.watcher = this.wanted === undefined ? dirWatcher() : this.wanted;
    const watcher = this.judge.watcher;
    watcher?.drain();
    const rootId = lstatId(root);
    const last = tree.last;
    let result: BelowScan;
    if (
      watcher !== null &&
      last !== null &&
      rootId?.dir === true &&
      last.limit === limit &&
      last.changes === watcher.changes() &&
      sameIdentity(last.root, rootId)
    ) {
      // Every directory of the last search was watched and no watch has seen anything since: it would reuse them all.
      result = {
        ...last.result,
        denied: [...last.result.denied],
        dirsRead: 0,
        dirsReused: tree.dirs.size,
        dirsChecked: 1,
      };
    } else {
      const walked = walk(root, hidden, limit, tree.dirs, this.judge);
      result = walked.out;
      tree.walks = (tree.walks ?? 0) + 1;
      if (walked.toWatch.length > 0 && watcher !== null && rootId?.dir === true)
        this.watchLater(
          {
            tree,
            walks: tree.walks,
            dirs: walked.toWatch,
            root: rootId,
            limit,
            result: { ...result, denied: [...result.denied] },
          },
          watcher,
        );
      // What a later process starts from: saved when this search had to read anything, or had nothing saved to start from.
      if (index !== null && result.complete && (result.dirsRead > 0 || (fromIndex === null && !this.saved.has(id)))) {
        saveIndex(index, id, tree.dirs);
        this.saved.add(id);
      }
      tree.last =
        watcher !== null && walked.unwatched === 0 && result.complete && rootId?.dir === true
          ? { changes: watcher.changes(), root: rootId, limit, result: { ...result, denied: [...result.denied] } }
          : null;
    }
    // A root that is a link is searched through it, unremembered: its target can change while the link does not.
    if (tree.dirs.size > 0) {
      this.trees.set(id, tree);
      while (this.trees.size > MAX_TREES) this.trees.delete(this.trees.keys().next().value!);
    }
    return result;
  }

  /** Forgets everything. */
  clear(): void {
    this.trees.clear();
    this.toWatch.length = 0;
  }

  /** Searches whose directories were vouched for by their identity alone, waiting for their watches. */
  private readonly toWatch: WatchJob[] = [];
  private watching = false;

  /**
   * Takes the watches of a search's directories after it, a few milliseconds at a time between other work (while the
   * command runs), so a later search can skip their lstat. Each watch is taken first and the directory's identity
   * compared after it: one that changed since its listing was judged is not vouched for (read again next time), and a
   * change after the comparison is an event on the watch. Once every directory of the search has a watch that has
   * seen nothing, and no search of the tree came after, its result is what the next search answers after an lstat of
   * the root, as for a search made under watches. Until then, searches lstat the directories as before.
   */
  private watchLater(job: WatchJob, watcher: DirWatcher): void {
    this.toWatch.push(job);
    if (this.watching) return;
    this.watching = true;
    const step = () => {
      const until = performance.now() + WATCH_SLICE_MS;
      while (this.toWatch.length > 0 && performance.now() < until) {
        const current = this.toWatch[0]!;
        for (let i = 0; i < 64 && current.dirs.length > 0; i++) {
          const [dir, node] = current.dirs.pop()!;
          if (node.token !== null) continue;
          const token = watcher.watch(dir, node.dev);
          if (token === null) continue;
          const id = lstatId(dir);
          if (id?.dir === true && sameIdentity(node, id)) node.token = token;
          else node.racy = true;
        }
        if (current.dirs.length === 0) {
          this.toWatch.shift();
          completeLast(current, watcher);
        }
      }
      if (this.toWatch.length > 0) setImmediate(step);
      else this.watching = false;
    };
    setImmediate(step);
  }
}

/** Sets the tree's `last` to the job's result when no search came after it and every directory's watch vouches for it. */
function completeLast(job: WatchJob, watcher: DirWatcher): void {
  const { tree } = job;
  if (tree.walks !== job.walks || tree.last !== null || !job.result.complete) return;
  watcher.drain();
  for (const node of tree.dirs.values()) if (node.token === null || !watcher.unchanged(node.token)) return;
  tree.last = { changes: watcher.changes(), root: job.root, limit: job.limit, result: job.result };
}

/** Longest stretch of watchLater's work at once: the event loop (a command's output, the proxy) waits no longer. */
const WATCH_SLICE_MS = 8;

/** The process's cache, used by planHiding. */
export const scanCache = new ScanCache();

/** Searches below `root` without remembering anything (the reference the cache must agree with). */
export function scanBelow(root: string, hidden: (real: string) => boolean, limit = SCAN_LIMIT): BelowScan {
  return walk(root, hidden, limit, null, null).out;
}

function walk(
  root: string,
  hidden: (real: string) => boolean,
  limit: number,
  tree: Map<string, ScannedDir> | null,
  judge: Judge | null,
): { out: BelowScan; unwatched: number; toWatch: [string, ScannedDir][] } {
  const out: BelowScan = { denied: [], complete: true, entries: 0, dirsRead: 0, dirsReused: 0, dirsChecked: 0 };
  let unwatched = 0;
  const unwatchedDirs: [string, ScannedDir][] = [];
  const rootIsDir = tree !== null && lstatId(root)?.dir === true;
  if (!rootIsDir) tree?.clear();
  // The tree is updated in place: directories this search reaches are marked with its number, the others dropped after.
  const mark = ++walks;
  let reached = 0;
  const watcher = judge?.watcher ?? null;
  const clean = (node: ScannedDir | undefined) =>
    node?.token !== null && node?.token !== undefined && watcher !== null && watcher.unchanged(node.token);
  // Each directory with whether its parent vouches for it: the parent's remembered listing reused under a watch
  // that saw nothing since, so its name still leads to the directory remembered (the root's parent is not watched).
  const stack: string[] = [root];
  const vouchedBy: boolean[] = [false];
  while (stack.length > 0) {
    if (out.entries >= limit) {
      out.complete = false;
      break;
    }
    const dir = stack.pop()!;
    const vouched = vouchedBy.pop()!;
    const prev = rootIsDir ? tree!.get(dir) : undefined;
    let node: ScannedDir;
    let reused = false;
    if (tree === null || judge === null || !rootIsDir) {
      node = read(dir, hidden, null, null);
      out.dirsRead++;
    } else if (vouched && clean(prev)) {
      node = prev!;
      reused = true;
    } else {
      // Identity (and watch) first, listing after: a change between them shows as a new identity or an event next time.
      // A listing remembered without a watch (one from the saved index) is judged by its identity alone, and gets its
      // watch after the search, off the command's path (ScanCache's watchLater).
      const id = lstatId(dir);
      out.dirsChecked++;
      if (id === null || !id.dir) continue; // gone, or no longer a directory: nothing below it
      if (prev && sameIdentity(prev, id) && (prev.token !== null ? clean(prev) : !prev.racy)) {
        node = prev;
        if (node.token === null && watcher !== null) unwatchedDirs.push([dir, node]);
        reused = true;
      } else {
        node = read(dir, hidden, id, judge);
        out.dirsRead++;
      }
    }
    if (reused) out.dirsReused++;
    else if (rootIsDir) tree!.set(dir, node);
    if (node.seen !== mark) {
      node.seen = mark;
      reached++;
    }
    if (node.token === null) unwatched++;
    out.entries += node.entries;
    for (const p of node.denied) out.denied.push(p);
    const vouches = reused && clean(node);
    for (const p of node.subdirs) {
      stack.push(p);
      vouchedBy.push(vouches);
    }
  }
  if (tree !== null && tree.size > reached) for (const [p, node] of tree) if (node.seen !== mark) tree.delete(p);
  return { out, unwatched, toWatch: unwatchedDirs };
}

/**
 * The saved form of one remembered directory: where it is (the row of its parent and its own name, or -1 and its full
 * path), its identity as text (bigints), whether racy, what it holds (names of its direct entries). Names instead of
 * paths make the file a third of the size, which a process reads before its first command.
 */
type SavedDir = [
  parent: number,
  name: string,
  dev: string,
  ino: string,
  mtimeNs: string,
  ctimeNs: string,
  racy: 0 | 1,
  entries: number,
  denied: string[],
  subdirs: string[],
];

/** Version of the saved index's format: a file of another is ignored. */
const INDEX_FORMAT = 2;

const below = (dir: string, name: string) => (dir === "/" ? `/${name}` : `${dir}/${name}`);

/**
 * Reads a saved search (its directories as last read, without watches): each is then judged by its lstat, exactly as a
 * remembered one without a watch is, so a stale index costs re-reads, never a wrong answer. Null when absent or not
 * this search's (another id, format, or damaged).
 */
function loadIndex(file: string, id: string): Map<string, ScannedDir> | null {
  try {
    const data = JSON.parse(readFileSync(file, "utf8")) as { format: number; id: string; dirs: SavedDir[] };
    if (data.format !== INDEX_FORMAT || data.id !== id || !Array.isArray(data.dirs)) return null;
    const dirs = new Map<string, ScannedDir>();
    const paths: string[] = [];
    for (const [parent, name, dev, ino, mtimeNs, ctimeNs, racy, entries, denied, subdirs] of data.dirs) {
      if (parent >= paths.length || typeof name !== "string") return null; // damaged: a parent after its child
      const at = parent < 0 ? name : below(paths[parent]!, name);
      paths.push(at);
      dirs.set(at, {
        dev: BigInt(dev),
        ino: BigInt(ino),
        mtimeNs: BigInt(mtimeNs),
        ctimeNs: BigInt(ctimeNs),
        racy: racy === 1,
        token: null,
        entries,
        denied: denied.map((n) => below(at, n)),
        subdirs: subdirs.map((n) => below(at, n)),
        seen: 0,
      });
    }
    return dirs;
  } catch {
    // An unreadable cache is none: the directories are searched again.
    return null;
  }
}

/** Saves a search's directories (written aside, then renamed into place: a reader never sees half a file). */
function saveIndex(file: string, id: string, dirs: Map<string, ScannedDir>): void {
  const saved: SavedDir[] = [];
  const row = new Map<string, number>();
  const nameIn = (dir: string, p: string) => p.slice(dir === "/" ? 1 : dir.length + 1);
  for (const [path, d] of dirs) {
    const slash = path.lastIndexOf("/");
    const parentPath = slash <= 0 ? "/" : path.slice(0, slash);
    const parent = path === "/" ? undefined : row.get(parentPath);
    row.set(path, saved.length);
    saved.push([
      parent ?? -1,
      parent === undefined ? path : path.slice(slash + 1),
      String(d.dev),
      String(d.ino),
      String(d.mtimeNs),
      String(d.ctimeNs),
      d.racy ? 1 : 0,
      d.entries,
      d.denied.map((p) => nameIn(path, p)),
      d.subdirs.map((p) => nameIn(path, p)),
    ]);
  }
  try {
    mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ format: INDEX_FORMAT, id, dirs: saved }), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // Not saved: the next process searches again.
  }
}

/** Searches made so far: each marks the directories it reaches. */
let walks = 0;

interface Identity {
  dir: boolean;
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

function sameIdentity(a: Omit<Identity, "dir">, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

function lstatId(p: string): Identity | null {
  try {
    const st = lstatSync(p, { bigint: true });
    return { dir: st.isDirectory(), dev: st.dev, ino: st.ino, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs };
  } catch {
    // Gone: its cached entry no longer holds.
    return null;
  }
}

/** Lists `dir` and judges its entries; an unreadable directory holds nothing the command could read either. */
function read(dir: string, hidden: (real: string) => boolean, id: Identity | null, judge: Judge | null): ScannedDir {
  const node: ScannedDir = {
    dev: id?.dev ?? 0n,
    ino: id?.ino ?? 0n,
    mtimeNs: id?.mtimeNs ?? 0n,
    ctimeNs: id?.ctimeNs ?? 0n,
    racy: true,
    token: id !== null ? (judge?.watcher?.watch(dir, id.dev) ?? null) : null,
    seen: 0,
    entries: 0,
    denied: [],
    subdirs: [],
  };
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    // Unreadable to Pencil: nothing below it is cached, and the caller's scan marks it.
    return node;
  }
  // The clock after the listing: a change after it in the stamps' own tick would not move them.
  if (id !== null && judge !== null) {
    const now = judge.now();
    node.racy = now - id.mtimeNs < judge.windowNs || now - id.ctimeNs < judge.windowNs;
  }
  node.entries = entries.length;
  for (const e of entries) {
    const p = join(dir, e.name);
    // A link is not masked: a mask on it would land on its target, which the command sees at its own path exactly as
    // the plan has it there (covered, masked, or a system file shown anyway). Masking every CA link of /etc/ssl/certs
    // (*.pem, by name) cost a mount each and took public certificates away from TLS clients.
    if (e.isSymbolicLink()) continue;
    if (hidden(p)) node.denied.push(p);
    else if (e.isDirectory()) node.subdirs.push(p);
  }
  return node;
}
