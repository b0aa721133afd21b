import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  type Stats,
} from "node:fs";
import { copyFile, lstat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative } from "node:path";
import type { FileOps } from "./file-ops.ts";
import type { StagedEntry } from "./overlay.ts";
import { WalkRules } from "./walk.ts";
import { isInside, realPathLoose, type Workspace } from "./workspace.ts";

/**
 * How shared (not copied) directories reach the command. `namespace`: an empty
 * directory in the scratch copy that the runner bind-mounts the real one on,
 * read-only, in a private mount namespace. `plain`: a symbolic link to the real
 * directory, so writes through it would land on disk; they are detected by
 * fingerprinting the real directory before and after, not prevented.
 */
export type ShareMode = "namespace" | "plain";

/** Directory names that hold installed dependencies: shared with the command, never copied. */
export const DEPENDENCY_DIRS: readonly string[] = ["node_modules", ".venv", "venv", ".tox", "bower_components"];

/** What makeScratch needs. */
export interface ScratchOptions {
  /** The staged view (normally the overlay): its staged entries are laid over the copy and .gitignore files are read through it. */
  fs: FileOps;
  /** Policy visibility of a real path; what it refuses is not placed in the copy (nor readable through a shared directory). */
  visible: (real: string) => boolean;
  share: ShareMode;
  /** Where the scratch directory is made (default: the OS temp dir); must be outside the workspace. */
  parent?: string;
  /** Names of directories always shared (default DEPENDENCY_DIRS). */
  shareNames?: readonly string[];
  /** A .gitignored directory with more entries than this is shared instead of copied (default 1000). */
  shareOver?: number;
}

/** A real directory the command sees without it being copied. */
export interface SharedDir {
  /** Workspace-relative path. */
  rel: string;
  /** Real path of the directory shared. */
  real: string;
  /** Paths (absolute, inside the scratch copy) of entries the policy hides; the namespace runner masks them. */
  masks: { path: string; dir: boolean }[];
}

/** The state of one entry of the scratch copy, enough to tell whether a command touched it. */
export interface EntrySig {
  kind: "file" | "link" | "other";
  dev: number;
  ino: number;
  size: number;
  mode: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** A scratch copy of workspace + overlay, ready for a command. */
export interface Scratch {
  /** The real workspace the copy was made from. */
  ws: Workspace;
  /** The temporary directory holding everything below; removed by disposeScratch. */
  root: string;
  /** The copy of the workspace: where the command runs. */
  dir: string;
  /** HOME for the command (empty). */
  home: string;
  /** TMPDIR for the command. */
  tmp: string;
  /** An empty directory, mounted over hidden directories in shared ones. */
  empty: string;
  share: ShareMode;
  shared: SharedDir[];
  /** Namespace mode: real directories the runner bind-mounts read-only at `target` (shared directories, git's object store). */
  mounts: { source: string; target: string }[];
  /** Entries left out because the policy hides them (their names are not reported). */
  hidden: number;
  /** Things the model should know about the copy (e.g. git metadata not available). */
  notes: string[];
  /** Every entry of the copy (no directories) as placed, by workspace-relative path. */
  baseline: Map<string, EntrySig>;
  /** Plain mode: fingerprints of the real shared directories, to detect writes that went through the links. */
  sharedPrints: Map<string, string>;
  /** Gitignore rules of the workspace as the staged view has them. */
  rules: WalkRules;
  /** The staged view the copy was made from: what "unchanged" is compared against. */
  fs: FileOps;
}

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
  /** Why a created or modified file's bytes were not read although within the per-file cap (per-run cap, swapped while read); it must not be staged. */
  unread?: string;
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

/** Raised when a scratch copy cannot be made; the message says what to do. */
export class ScratchError extends Error {
  override name = "ScratchError";
}

const CLONE = constants.COPYFILE_FICLONE;
const COPY_CONCURRENCY = 16;
const GIT_SKIP = new Set([".git/lfs", ".git/modules"]);

/**
 * Makes a scratch copy of the workspace with the staged state laid over it.
 * Files are copied (copy-on-write clones where the file system can), never
 * hard-linked: a hard link would let an in-place write reach the real file.
 * Dependency directories and big ignored ones are shared, not copied (see
 * ShareMode). `.git` is copied without its object store, which is reached
 * through git's `objects/info/alternates`: git works (status, diff, even
 * commit, whose new objects land in the copy) and never writes the real repo.
 */
export async function makeScratch(ws: Workspace, options: ScratchOptions): Promise<Scratch> {
  const parent = options.parent ?? tmpdir();
  const realParent = realPathLoose(parent).real;
  if (isInside(ws.root, realParent)) {
    throw new ScratchError(`The scratch parent ${parent} is inside the workspace ${ws.root}: choose a temporary directory outside it (set TMPDIR).`);
  }
  const root = mkdtempSync(join(realParent, "pencil-run-"));
  const s: Scratch = {
    ws,
    root,
    dir: join(root, "ws"),
    home: join(root, "home"),
    tmp: join(root, "tmp"),
    empty: join(root, "empty"),
    share: options.share,
    shared: [],
    mounts: [],
    hidden: 0,
    notes: [],
    baseline: new Map(),
    sharedPrints: new Map(),
    rules: new WalkRules({ fs: options.fs, top: ws.root, visible: options.visible }),
    fs: options.fs,
  };
  try {
    for (const d of [s.dir, s.home, s.tmp, s.empty]) mkdirSync(d, { mode: 0o755 });
    const staged = stagedInside(ws, options.fs);
    const setup = new Setup(s, options, staged);
    setup.copyDir(ws.root, s.dir, "");
    await setup.copyFiles();
    setup.layStaged();
    setup.fixDirs();
    recordTree(s.dir, s.baseline);
    if (s.share === "plain") for (const sd of s.shared) fingerprint(sd.real, s.sharedPrints);
    settleClock(s);
  } catch (error) {
    disposeScratch(s);
    throw error;
  }
  return s;
}

/**
 * Removes the scratch directory, also where the command made parts of it
 * read-only (never following a link out of it); false when something is left.
 */
export function disposeScratch(s: Pick<Scratch, "root">): boolean {
  try {
    rmSync(s.root, { recursive: true, force: true });
    return true;
  } catch {
    // A command may have left directories without write permission: give it back, then retry.
    makeWritable(s.root);
    try {
      rmSync(s.root, { recursive: true, force: true });
      return true;
    } catch {
      return false;
    }
  }
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
export function diffScratch(s: Scratch, maxBytes: number, caps: DiffCaps = DIFF_CAPS): ScratchChange[] {
  const now = new Map<string, EntrySig>();
  if (!recordTree(s.dir, now)) throw new ScratchError("the command replaced the scratch copy's root directory, so none of its file effects can be trusted; nothing was staged.");
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

/**
 * Kernel timestamps tick coarsely (a few ms): a write in the same tick as the
 * copy would leave ctime unchanged. Waits until a fresh ctime is past every
 * ctime of the baseline, so any write by the command moves the ctime.
 */
function settleClock(s: Scratch): void {
  let newest = 0;
  for (const sig of s.baseline.values()) if (sig.ctimeMs > newest) newest = sig.ctimeMs;
  const marker = join(s.root, "clock");
  const deadline = performance.now() + 1000;
  for (;;) {
    writeFileSync(marker, "");
    if (lstatSync(marker).ctimeMs > newest || performance.now() > deadline) return;
    Bun.sleepSync(1);
  }
}

/** The walk that places the copy: one instance per makeScratch. */
class Setup {
  private readonly shareNames: ReadonlySet<string>;
  private readonly shareOver: number;
  /** Workspace-relative directories that hold staged entries: never shared, so the staged state shows. */
  private readonly stagedDirs = new Set<string>();
  /** Files to copy (real, dest), queued by the walk. */
  private readonly files: [string, string][] = [];
  /** Directories whose mode and times are restored once their files are in, deepest first. */
  private readonly dirs: { dest: string; mode: number; atimeMs: number; mtimeMs: number }[] = [];

  constructor(
    private readonly s: Scratch,
    private readonly options: ScratchOptions,
    private readonly staged: { rel: string; entry: StagedEntry }[],
  ) {
    this.shareNames = new Set(options.shareNames ?? DEPENDENCY_DIRS);
    this.shareOver = options.shareOver ?? 1000;
    for (const { rel } of staged) for (let d = dirname(rel); d !== "."; d = dirname(d)) this.stagedDirs.add(d);
  }

  copyDir(realDir: string, destDir: string, rel: string): void {
    for (const d of readdirSync(realDir, { withFileTypes: true })) {
      const childRel = rel === "" ? d.name : `${rel}/${d.name}`;
      const real = join(realDir, d.name);
      const dest = join(destDir, d.name);
      if (childRel === ".git") {
        this.copyGit(real, dest);
        continue;
      }
      if (GIT_SKIP.has(childRel)) continue;
      if (d.isSymbolicLink()) {
        this.placeLink(real, dest);
        continue;
      }
      if (!this.options.visible(real)) {
        this.s.hidden += 1;
        continue;
      }
      if (d.isDirectory()) {
        if (childRel === ".git/objects") {
          this.linkObjects(real, dest);
        } else if (rel !== ".git" && !rel.startsWith(".git/") && this.shouldShare(real, d.name, childRel)) {
          this.shareDir(real, dest, childRel);
        } else {
          const st = lstatSync(real);
          mkdirSync(dest, { mode: 0o700 });
          this.copyDir(real, dest, childRel);
          this.dirs.push({ dest, mode: st.mode & 0o7777, atimeMs: st.atimeMs, mtimeMs: st.mtimeMs });
        }
      } else if (d.isFile()) {
        this.files.push([real, dest]);
      }
      // Sockets, FIFOs and devices are not copied: a command could block on them or reach a live service.
    }
  }

  /**
   * Copies the queued files, several at a time: creating files is what the
   * copy's time goes to, the file system overlaps it well, and the event loop
   * (a Telegram bot's, say) stays responsive meanwhile.
   */
  async copyFiles(): Promise<void> {
    let next = 0;
    let failure: unknown = null;
    const worker = async () => {
      while (failure === null && next < this.files.length) {
        const [real, dest] = this.files[next++]!;
        try {
          const st = await lstat(real);
          // copyFile keeps the permission bits; build tools compare mtimes, so the copy must look as old as the original.
          await copyFile(real, dest, CLONE);
          await utimes(dest, st.atimeMs / 1000, st.mtimeMs / 1000);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // A file removed while the copy was being made is simply not there.
          if (code !== "ENOENT") failure ??= error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(COPY_CONCURRENCY, this.files.length) }, worker));
    if (failure !== null) throw failure;
  }

  /** Gives copied directories their original mode and times, now that nothing more is created in them. */
  fixDirs(): void {
    for (const d of this.dirs) {
      chmodSync(d.dest, d.mode);
      utimesSync(d.dest, d.atimeMs / 1000, d.mtimeMs / 1000);
    }
  }

  /** Writes the overlay's staged files into the copy and removes its staged deletions. */
  layStaged(): void {
    for (const { rel, entry } of this.staged) {
      if (!this.options.visible(entry.real)) continue;
      const dest = join(this.s.dir, rel);
      try {
        if (!entry.after) {
          rmSync(dest, { force: true });
          continue;
        }
        mkdirSync(dirname(dest), { recursive: true });
        rmSync(dest, { force: true });
        writeFileSync(dest, entry.after.bytes, { mode: entry.after.mode });
        // The umask filters the mode given to writeFileSync; the command must see the staged mode exactly.
        chmodSync(dest, entry.after.mode);
      } catch (error) {
        // E.g. a staged file below a path that is a file on disk: the copy cannot hold both.
        this.s.notes.push(`Note: the staged ${entry.after ? "file" : "deletion"} ${rel} could not be placed in the scratch copy (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
      }
    }
  }

  private shouldShare(real: string, name: string, rel: string): boolean {
    if (this.stagedDirs.has(rel)) return false;
    if (this.shareNames.has(name)) return true;
    if (this.s.rules.admits(real, name, "dir")) return false;
    // Ignored (build output, caches): copy it when small, so writes into it stay in the copy.
    return countOver(real, this.shareOver);
  }

  private shareDir(real: string, dest: string, rel: string): void {
    const found = scanShared(real, this.s.ws.root, this.options.visible);
    const sd: SharedDir = { rel, real, masks: [] };
    this.s.shared.push(sd);
    this.s.hidden += found.hidden.length;
    if (this.s.share === "namespace") {
      // Mounted at the workspace's own path, links that lead back into the workspace already reach the copy.
      mkdirSync(dest);
      this.s.mounts.push({ source: real, target: dest });
      for (const h of found.hidden) sd.masks.push({ path: join(dest, relative(real, h.path)), dir: h.dir });
      return;
    }
    const special = new Map<string, string | null>();
    for (const h of found.hidden) special.set(h.path, null);
    for (const l of found.inward) special.set(l.path, join(this.s.dir, relative(this.s.ws.root, l.target)));
    linkAround(real, dest, special);
  }

  /**
   * A link in the workspace becomes a link in the copy: relative to the copy
   * when its target is inside the workspace (so writes through it stay in the
   * copy), unchanged when outside. Links the policy hides are left out.
   */
  private placeLink(real: string, dest: string): void {
    let target: string;
    try {
      const text = readlinkSync(real);
      target = realPathLoose(isAbsolute(text) ? text : join(dirname(real), text)).real;
    } catch {
      return; // a link loop: nothing a command could use
    }
    if (!this.options.visible(target)) {
      this.s.hidden += 1;
      return;
    }
    const inside = isInside(this.s.ws.root, target);
    const to = inside ? relative(dirname(dest), join(this.s.dir, relative(this.s.ws.root, target))) || "." : target;
    symlinkSync(to, dest);
  }

  private copyGit(real: string, dest: string): void {
    let st: Stats;
    try {
      st = lstatSync(real);
    } catch {
      return;
    }
    if (!st.isDirectory()) {
      // A worktree or submodule: .git points at a repository elsewhere, which git commands would write.
      this.s.notes.push("git metadata is not available: .git is a link to a repository outside the workspace.");
      return;
    }
    mkdirSync(dest, { mode: st.mode & 0o7777 });
    this.copyDir(real, dest, ".git");
  }

  /**
   * The copy's object store starts empty and borrows the real one through
   * alternates, which git only reads. In the namespace the real path is
   * covered by the copy, so the store is mounted (read-only) beside it.
   */
  private linkObjects(real: string, dest: string): void {
    mkdirSync(join(dest, "info"), { recursive: true });
    mkdirSync(join(dest, "pack"));
    let store = real;
    if (this.s.share === "namespace") {
      store = join(this.s.root, "git-objects");
      mkdirSync(store);
      this.s.mounts.push({ source: real, target: store });
    }
    writeFileSync(join(dest, "info", "alternates"), store + "\n");
  }
}

/** The overlay's staged entries inside the workspace, with their relative paths (plain disk: none). */
function stagedInside(ws: Workspace, fs: FileOps): { rel: string; entry: StagedEntry }[] {
  const list = (fs as { list?: () => StagedEntry[] }).list;
  if (typeof list !== "function") return [];
  const out: { rel: string; entry: StagedEntry }[] = [];
  for (const entry of list.call(fs)) {
    if (!isInside(ws.root, entry.real) || entry.real === ws.root) continue;
    const rel = relative(ws.root, entry.real);
    if (rel === ".git" || rel.startsWith(".git/")) continue;
    out.push({ rel, entry });
  }
  return out;
}

/** True when `dir` holds more than `limit` entries in all (stops counting past it). */
function countOver(dir: string, limit: number): boolean {
  let n = 0;
  const stack = [dir];
  while (stack.length > 0) {
    let entries;
    try {
      const current = stack.pop()!;
      entries = readdirSync(current, { withFileTypes: true }).map((e) => ({ path: join(current, e.name), dir: e.isDirectory() }));
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++n > limit) return true;
      if (e.dir) stack.push(e.path);
    }
  }
  return false;
}

/** What scanShared finds below a shared directory. */
interface SharedScan {
  /** Entries the policy hides (a hidden directory is listed once, not entered). */
  hidden: { path: string; dir: boolean }[];
  /** Links whose target is in the workspace but outside this directory (a workspace package linked into node_modules). */
  inward: { path: string; target: string }[];
}

function scanShared(dir: string, wsRoot: string, visible: (real: string) => boolean): SharedScan {
  const found: SharedScan = { hidden: [], inward: [] };
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const path = join(current, e.name);
      if (!e.isSymbolicLink()) {
        if (!visible(path)) found.hidden.push({ path, dir: e.isDirectory() });
        else if (e.isDirectory()) stack.push(path);
        continue;
      }
      let target: string;
      try {
        target = realPathLoose(path).real;
      } catch {
        continue; // a link loop: nothing can be read through it
      }
      if (!visible(target)) found.hidden.push({ path, dir: false });
      else if (isInside(wsRoot, target) && !isInside(dir, target)) found.inward.push({ path, target });
    }
  }
  return found;
}

/**
 * Plain mode: links `dest` to `real` as a whole where nothing special lies
 * below; otherwise `dest` is a real directory whose entries are placed one by
 * one, recursively. Special entries map to null (hidden: left out) or to the
 * path in the copy a link must lead to instead of the real workspace.
 */
function linkAround(real: string, dest: string, special: ReadonlyMap<string, string | null>): void {
  if (special.has(real)) {
    const to = special.get(real);
    if (to) symlinkSync(relative(dirname(dest), to) || ".", dest);
    return;
  }
  const prefix = real + "/";
  let below = false;
  for (const path of special.keys()) if (path.startsWith(prefix)) below = true;
  if (!below) {
    symlinkSync(real, dest);
    return;
  }
  mkdirSync(dest);
  for (const name of readdirSync(real)) linkAround(join(real, name), join(dest, name), special);
}

/** Linux: a directory opened by descriptor is named through /proc, so no path component is resolved twice. */
const FD_PATHS = process.platform === "linux" && existsSync("/proc/self/fd");
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * Opens `path` as a directory without following a link at its end and calls
 * `fn` with a path that names exactly that directory (through
 * /proc/self/fd on Linux, so a parent swapped for a link later changes
 * nothing); false when it is not a directory (a link, a file, gone).
 */
function inDir(path: string, fn: (at: string, fd: number) => void): boolean {
  let fd: number;
  try {
    fd = openSync(path, DIR_FLAGS);
  } catch {
    return false;
  }
  try {
    fn(FD_PATHS ? `/proc/self/fd/${fd}` : path, fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Records every non-directory entry below `dir` by relative path. Links are
 * recorded, never followed: a directory that became a link is entered by
 * descriptor or not at all. False when `dir` itself is not a directory.
 */
function recordTree(dir: string, into: Map<string, EntrySig>): boolean {
  const walk = (path: string, rel: string): boolean =>
    inDir(path, (at) => {
      let entries;
      try {
        entries = readdirSync(at, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const childRel = rel === "" ? e.name : `${rel}/${e.name}`;
        const child = join(at, e.name);
        if (e.isDirectory() && walk(child, childRel)) continue;
        let st: Stats;
        try {
          st = lstatSync(child);
        } catch {
          continue;
        }
        if (st.isDirectory()) continue; // swapped back in the meantime: not recorded, as with any race of a directory
        into.set(childRel, {
          kind: st.isFile() ? "file" : st.isSymbolicLink() ? "link" : "other",
          dev: st.dev,
          ino: st.ino,
          size: st.size,
          mode: st.mode & 0o7777,
          mtimeMs: st.mtimeMs,
          ctimeMs: st.ctimeMs,
        });
      }
    });
  return walk(dir, "");
}

/** Fingerprints every entry below `dir` (itself included; links not followed) into `into`, by absolute path. */
function fingerprint(dir: string, into: Map<string, string>): void {
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let st: Stats;
    try {
      st = lstatSync(current);
    } catch {
      continue;
    }
    into.set(current, `${st.mode}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`);
    if (!st.isDirectory()) continue;
    try {
      for (const name of readdirSync(current)) stack.push(join(current, name));
    } catch {
      // unreadable: its fingerprint above still catches entries added or removed
    }
  }
}

/** The budget left of a diffScratch run's DiffCaps. */
interface Budget {
  bytes: number;
  files: number;
  caps: DiffCaps;
}

function readChange(s: Scratch, rel: string, sig: EntrySig, change: "create" | "modify", maxBytes: number, budget: Budget): ScratchChange {
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
  const read = readRecorded(join(s.dir, rel), sig, maxBytes);
  if (typeof read === "string") out.unread = read;
  else if (read) out.bytes = read;
  return out;
}

/**
 * Reads a file of the copy only when it is the regular file the walk
 * recorded (same device and inode, opened without following a link and
 * without blocking on a FIFO); null when it vanished, a reason when it is
 * something else now or grew past `maxBytes`.
 */
function readRecorded(path: string, sig: EntrySig, maxBytes: number): Uint8Array | string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Gone between the walk and the read: reported without content. A link now (ELOOP) or anything else: refused.
    return code === "ENOENT" ? null : "it was replaced (by a link or special file) after the command ran";
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.dev !== sig.dev || st.ino !== sig.ino) return "it was replaced (by a link or special file) after the command ran";
    if (st.size > maxBytes) return `it grew past the ${maxBytes}-byte limit per file while being read`;
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** True when the copy's file has the staged view's content and mode: touched, but not changed. */
function sameAsView(s: Scratch, rel: string, change: ScratchChange, sig: EntrySig): boolean {
  const real = join(s.ws.root, rel);
  let st;
  try {
    st = s.fs.stat(real);
  } catch {
    return false;
  }
  if (!st || st.kind !== "file" || st.mode !== sig.mode || st.size !== sig.size || !change.bytes) return false;
  try {
    return Buffer.compare(Buffer.from(s.fs.readBytes(real)), Buffer.from(change.bytes)) === 0;
  } catch {
    return false;
  }
}

/** Gives write permission back to every real directory below `dir`, by descriptor: links are never followed, so nothing outside is chmodded. */
function makeWritable(dir: string): void {
  inDir(dir, (at, fd) => {
    try {
      fchmodSync(fd, 0o700);
      for (const e of readdirSync(at, { withFileTypes: true })) if (e.isDirectory()) makeWritable(join(at, e.name));
    } catch {
      // best effort: rmSync reports what is left
    }
  });
}
