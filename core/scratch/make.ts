import {
  chmodSync,
  constants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  type Stats,
} from "node:fs";
import { copyFile, lstat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative } from "node:path";
import type { FileOps } from "../file-ops.ts";
import type { StagedEntry } from "../staging/overlay.ts";
import { sandboxGlobalConfig, sandboxRepositoryConfig } from "../git/sandbox-config.ts";
import { WalkRules } from "../policy/walk.ts";
import { isInside, realPathLoose, type Workspace } from "../workspace.ts";
import { disposeScratch } from "./dispose.ts";
import { fingerprint, recordTree, settleClock } from "./record.ts";
import { scratchPrefix, sweepStaleScratches, trackScratch } from "./live.ts";
import { countOver, DEPENDENCY_DIRS, linkAround, scanShared } from "./share.ts";
import type { Scratch, SharedDir, ShareMode } from "./types.ts";
import { ScratchError } from "../errors/scratch-error.ts";

/** What makeScratch needs. */
export interface ScratchOptions {
  /** The staged view (normally the overlay): its staged entries are laid over the copy and .gitignore files are read through it. */
  fs: FileOps;
  /** Policy visibility of a real path; what it refuses is not placed in the copy (nor readable through a shared directory). */
  visible: (real: string) => boolean;
  /**
   * Whether a link of the workspace to this real path outside it is kept (default `visible`): the sandbox passes
   * "shown read-only to the command anyway" (/usr, a toolchain root on PATH), so a virtualenv's bin/python stays.
   */
  linkVisible?: (real: string) => boolean;
  share: ShareMode;
  /** Where the scratch directory is made (default: the OS temp dir); must be outside the workspace. */
  parent?: string;
  /** Names of directories always shared (default DEPENDENCY_DIRS). */
  shareNames?: readonly string[];
  /** A .gitignored directory with more entries than this is shared instead of copied (default 1000). */
  shareOver?: number;
  /** Names of hidden files to list in Scratch.hiddenFiles (the package managers' settings, shown filtered). */
  listHidden?: (name: string) => boolean;
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
    throw new ScratchError(
      `The scratch parent ${parent} is inside the workspace ${ws.root}: choose a temporary directory outside it (set TMPDIR).`,
    );
  }
  sweepStaleScratches(realParent);
  const root = mkdtempSync(join(realParent, scratchPrefix()));
  trackScratch(root);
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
    // The owner's git identity (and hooks off) for the command's git, in the home it is given.
    writeFileSync(join(s.home, ".gitconfig"), sandboxGlobalConfig(ws.root));
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
        if (d.isFile() && this.options.listHidden?.(d.name)) (this.s.hiddenFiles ??= []).push(childRel);
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
        this.s.notes.push(
          `Note: the staged ${entry.after ? "file" : "deletion"} ${rel} could not be placed in the scratch copy (${(error as NodeJS.ErrnoException).code ?? String(error)}).`,
        );
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
    const found = scanShared(real, this.s.ws.root, this.options.visible, this.options.linkVisible);
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
    const inside = isInside(this.s.ws.root, target);
    if (!(inside ? this.options.visible : (this.options.linkVisible ?? this.options.visible))(target)) {
      this.s.hidden += 1;
      return;
    }
    const to = inside ? relative(dirname(dest), join(this.s.dir, relative(this.s.ws.root, target))) || "." : target;
    symlinkSync(to, dest);
  }

  private copyGit(real: string, dest: string): void {
    let st: Stats;
    try {
      st = lstatSync(real);
    } catch {
      // No .git (gone meanwhile): the copy has none either.
      return;
    }
    if (!st.isDirectory()) {
      // A worktree or submodule: .git points at a repository elsewhere, which git commands would write.
      this.s.notes.push("git metadata is not available: .git is a link to a repository outside the workspace.");
      return;
    }
    mkdirSync(dest, { mode: st.mode & 0o7777 });
    this.copyDir(real, dest, ".git");
    // The real config is hidden (remote URLs can carry passwords); the copy gets it without credentials or programs.
    const config = sandboxRepositoryConfig(real);
    if (config !== null) writeFileSync(join(dest, "config"), config, { mode: 0o644 });
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
export function stagedInside(ws: Workspace, fs: FileOps): { rel: string; entry: StagedEntry }[] {
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
