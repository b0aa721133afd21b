import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { bytesFree } from "../apply/free-space.ts";
import { formatBytes } from "../format-bytes.ts";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { FileOps } from "../file-ops.ts";
import { sandboxGlobalConfig, sandboxRepositoryConfig } from "../git/sandbox-config.ts";
import { isFilteredSettingsName } from "../policy/settings-names.ts";
import { WalkRules } from "../policy/walk.ts";
import { isInside, realPathLoose, type Workspace } from "../workspace.ts";
import type { ScratchChange } from "./read-change.ts";
import { disposeScratch } from "./dispose.ts";
import { HiddenScan } from "./hidden-scan.ts";
import { scratchPrefix, sweepStaleScratches, trackScratch } from "./live.ts";
import { stagedInside } from "./make.ts";
import { upperEntry, type UpperEntry } from "./overlay.ts";
import type { Scratch } from "./types.ts";
import { ScratchError } from "../errors/scratch-error.ts";

/** What a path of the upper layer must show: a staged file, a staged deletion (null), or the workspace's own entry (undefined). */
/** Where a repository's config is, relative to the workspace. */
const GIT_CONFIG = ".git/config";

function isRealDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false; // No .git (or not readable): no repository config to lay.
  }
}

type Want = { bytes: Uint8Array; mode: number } | null | undefined;

/**
 * A copy-on-write scratch kept for the commands of one run. Its upper layer
 * outlives each command's namespace; before the next command it is brought
 * up to date while no overlay is mounted: the paths whose staged state
 * changed since (edits, deletions, reverts, rejections) and the command's
 * own changes that were not staged are set to what the staged view has, and
 * nothing else is touched. Changes in ignored trees (dependencies, build
 * output) stay for the run's later commands, never staged. Where the upper
 * layer cannot be brought back cheaply (a path below a directory a command
 * replaced must show the workspace again, a .gitignore changed), it is
 * emptied and laid again from the staged view, as for a run's first command.
 */
export class KeptScratch {
  /** The run's directory in the temp dir: the layers, and one directory per command. */
  readonly root: string;
  readonly upper: string;
  readonly work: string;
  /** Times the upper layer was emptied and laid again (its ignored changes lost). */
  rebuilds = 0;
  /** The upper layer as the last diff (or the refresh since) left it. */
  private baseline = new Map<string, UpperEntry>();
  /** The staged state laid into the upper layer, by relative path. */
  private laid = new Map<string, { bytes: Uint8Array | null; mode: number }>();
  /** Paths the last command changed and that must show the staged view again. */
  private readonly pending = new Set<string>();
  private readonly scan: HiddenScan;
  /** Background removals of finished commands' directories. */
  private readonly removals = new Set<Promise<void>>();
  /** Commands prepared so far. */
  commands = 0;
  /** The global git config each command's home gets (the owner's identity), read at the first command. */
  private gitGlobal: string | undefined;

  private constructor(
    readonly ws: Workspace,
    readonly fs: FileOps,
    parent: string,
  ) {
    sweepStaleScratches(parent);
    this.root = mkdtempSync(join(parent, scratchPrefix()));
    trackScratch(this.root);
    this.upper = join(this.root, "upper");
    this.work = join(this.root, "work");
    for (const d of [this.upper, this.work]) mkdirSync(d, { mode: 0o755 });
    this.scan = new HiddenScan(ws.root);
  }

  /** A kept scratch for `ws` and the staged view `fs`, in `parent` (default the OS temp dir, which must be outside the workspace). */
  static open(ws: Workspace, fs: FileOps, parent?: string): KeptScratch {
    const realParent = realPathLoose(parent ?? tmpdir()).real;
    if (isInside(ws.root, realParent)) {
      throw new ScratchError(
        `The scratch parent ${parent} is inside the workspace ${ws.root}: choose a temporary directory outside it (set TMPDIR).`,
      );
    }
    return new KeptScratch(ws, fs, realParent);
  }

  /**
   * The scratch for the next command: the upper layer refreshed from the
   * staged view, the entries the policy hides found again (only directories
   * that changed are read), and a fresh directory for the command's mount
   * point, HOME and TMPDIR.
   */
  prepare(visible: (real: string) => boolean, room?: number, linkVisible?: (real: string) => boolean): Scratch {
    const notes: string[] = [];
    // What earlier commands kept in ignored trees may fill the disk over a run: once the next command's room (its write
    // cap) is no longer free, it is dropped.
    const free = room === undefined || this.commands === 0 ? null : bytesFree(this.root);
    const crowded = free !== null && free < room!;
    const staged = stagedInside(this.ws, this.fs).filter(({ entry }) => visible(entry.real));
    const want = new Map<string, { bytes: Uint8Array | null; mode: number }>();
    for (const { rel, entry } of staged)
      want.set(rel, entry.after ? { bytes: entry.after.bytes, mode: entry.after.mode } : { bytes: null, mode: 0 });
    // The repository's config, hidden (its remote URLs can carry passwords), is laid in the upper layer filtered: it is
    // in the layer before the command, so it is never a change of the command's, and .git is never staged anyway.
    const gitConfig = isRealDir(join(this.ws.root, ".git"))
      ? sandboxRepositoryConfig(join(this.ws.root, ".git"))
      : null;
    if (gitConfig !== null) want.set(GIT_CONFIG, { bytes: new TextEncoder().encode(gitConfig), mode: 0o644 });
    // A settings file the agent created (staged, nowhere on disk) has no path of the workspace its filtered copy could be
    // bound on (placeSettings): an empty placeholder is laid for it, Pencil's own like the filtered config.
    const placeholders: string[] = [];
    for (const { rel, entry } of stagedInside(this.ws, this.fs)) {
      if (!entry.after || visible(entry.real) || !isFilteredSettingsName(basename(rel))) continue;
      if (lstatOrNull(join(this.ws.root, rel)) !== null) continue; // on disk: hidden, and its copy bound over it there
      want.set(rel, { bytes: PLACEHOLDER, mode: 0o444 });
      placeholders.push(rel);
    }
    const dirty = new Set(this.pending);
    for (const [rel, w] of want) {
      const l = this.laid.get(rel);
      if (!l || l.bytes !== w.bytes || l.mode !== w.mode) dirty.add(rel);
    }
    for (const rel of this.laid.keys()) if (!want.has(rel)) dirty.add(rel);
    const wantOf = (rel: string): Want => {
      const w = want.get(rel);
      return w === undefined ? undefined : w.bytes === null ? null : { bytes: w.bytes, mode: w.mode };
    };
    // A changed .gitignore may no longer ignore what earlier commands wrote (kept, never staged): start afresh.
    let clean =
      !crowded &&
      (this.commands === 0 || ![...dirty].some((rel) => rel === ".gitignore" || rel.endsWith("/.gitignore")));
    for (const rel of clean ? [...dirty].sort() : []) {
      if (!this.sync(rel, wantOf(rel), notes)) {
        clean = false;
        break;
      }
    }
    if (!clean) {
      this.wipe();
      this.rebuilds++;
      notes.length = 0;
      notes.push(
        crowded
          ? `Note: the disk holding the scratch had ${formatBytes(free!)} free, less than the ${formatBytes(room!)} one command may write, so the scratch was laid again from the staged changes; what earlier commands wrote to ignored files is gone.`
          : "Note: the scratch was laid again from the staged changes (a .gitignore changed, or a path below a directory an earlier command replaced had to show the workspace again); what earlier commands wrote to ignored files is gone.",
      );
      for (const rel of [...want.keys()].sort()) this.sync(rel, wantOf(rel), notes);
    }
    this.laid = want;
    this.pending.clear();
    // The filtered config is Pencil's, not the staged view's: the diff must not compare it with the real one (which
    // differs by design) as it does a freshly laid staged file; a command's change to it is still seen by its times.
    for (const rel of [GIT_CONFIG, ...placeholders]) {
      const laid = this.baseline.get(rel);
      if (laid?.fresh) this.baseline.set(rel, { ...laid, fresh: false });
    }
    const hidden = this.scan.scan(visible, linkVisible).filter((rel) => rel !== GIT_CONFIG || gitConfig === null);
    const placed: string[] = [];
    const deletions: string[] = [];
    for (const [rel, w] of want) {
      if (w.bytes !== null) placed.push(rel);
      else if (this.baseline.get(rel)?.kind !== "whiteout") deletions.push(rel);
    }
    // The same path for every command (what is planned from it stays the same); emptied after each.
    const root = join(this.root, "cmd");
    disposeScratch({ root });
    this.commands++;
    const s: Scratch = {
      ws: this.ws,
      root,
      dir: join(root, "ws"),
      home: join(root, "home"),
      tmp: join(root, "tmp"),
      empty: join(root, "empty"),
      share: "namespace",
      shared: [],
      mounts: [],
      hidden: hidden.length,
      notes,
      baseline: new Map(),
      sharedPrints: new Map(),
      rules: new WalkRules({ fs: this.fs, top: this.ws.root, visible }),
      fs: this.fs,
      overlay: {
        lower: this.ws.root,
        upper: this.upper,
        work: this.work,
        placed,
        deletions,
        // Whiteouts laid by an earlier command stay: only new ones are laid (rm -rf of what is already gone does nothing).
        hidden: hidden.filter((rel) => this.baseline.get(rel)?.kind !== "whiteout"),
        baseline: this.baseline,
        placeholders,
      },
    };
    mkdirSync(root, { mode: 0o755 });
    for (const d of [s.dir, s.home, s.tmp, s.empty]) mkdirSync(d, { mode: 0o755 });
    // The owner's git identity (and hooks off) for the command's git, read once a run.
    this.gitGlobal ??= sandboxGlobalConfig(this.ws.root);
    writeFileSync(join(s.home, ".gitconfig"), this.gitGlobal);
    return s;
  }

  /**
   * After the command: `changes` as diffed (the diff left the upper layer's
   * new state in the scratch), of which those `keep` says are kept in the
   * upper layer (ignored trees); the others are set back to the staged view
   * before the next command. Null: the command's effects are discarded (a
   * timeout, a cancel, the write cap, an untrustworthy upper layer): the upper
   * layer is emptied and laid again next time.
   */
  settle(s: Scratch | null, changes: ScratchChange[] | null, keep: (c: ScratchChange) => boolean): void {
    const after = s?.overlay?.after;
    if (changes === null || !after) {
      this.wipe();
      return;
    }
    this.baseline = after;
    for (const c of changes) if (!keep(c)) this.pending.add(c.rel);
  }

  /**
   * Moves a finished command's directory (its mount point, HOME, TMPDIR,
   * the namespace's own files) aside at once and removes it in the
   * background: the answer does not wait for it, and dispose takes whatever
   * is left.
   */
  release(s: Scratch): void {
    const aside = join(this.root, `done-${this.commands}`);
    try {
      renameSync(s.root, aside);
    } catch {
      // Could not be moved aside: it is removed here and now instead.
      disposeScratch(s);
      return;
    }
    const removal = rm(aside, { recursive: true, force: true })
      .catch(() => {})
      .finally(() => this.removals.delete(removal));
    this.removals.add(removal);
  }

  /** Resolves once the commands' directories moved aside are removed (or failed to be). */
  async idle(): Promise<void> {
    await Promise.all([...this.removals]);
  }

  /** Removes everything of the kept scratch (a removal still running in the background may race it: tried again); false when something is left. */
  dispose(): boolean {
    for (let i = 0; i < 3; i++) if (disposeScratch({ root: this.root })) return true;
    return false;
  }

  /** Empties the layers: the next command gets the staged view laid from nothing. */
  private wipe(): void {
    for (const d of [this.upper, this.work]) {
      disposeScratch({ root: d });
      mkdirSync(d, { mode: 0o755 });
    }
    this.baseline = new Map();
    this.laid = new Map();
    this.pending.clear();
  }

  /**
   * Makes `rel` in the upper layer show `want`; false when that takes more
   * than changing the entry itself (the workspace's entry must show below a
   * whiteout, a file or an opaque directory of the upper layer).
   */
  private sync(rel: string, want: Want, notes: string[]): boolean {
    const up = join(this.upper, rel);
    // What the upper layer has above the path: something not a directory (nothing below shows), an opaque directory (the workspace's entries below do not show).
    let blocked = false;
    let opaque = false;
    /** The upper layer's whiteout above the path (a directory a command deleted), when one is. */
    let whiteoutAbove: string | null = null;
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) {
      const a = parts.slice(0, i).join("/");
      const st = lstatOrNull(join(this.upper, a));
      if (!st) break;
      if (!st.isDirectory()) {
        blocked = true;
        if (st.isCharacterDevice() && st.rdev === 0) whiteoutAbove = a;
        break;
      }
      if (this.baseline.get(a)?.opaque) opaque = true;
    }
    const lowerHas = () => lstatOrNull(join(this.ws.root, rel)) !== null;
    if (want === null) {
      const cur = blocked ? null : lstatOrNull(up);
      if (cur && !(cur.isCharacterDevice() && cur.rdev === 0)) this.remove(rel, cur.isDirectory());
      // The runner lays the whiteout through the overlay where the workspace's entry would show.
      return true;
    }
    if (blocked && (want !== undefined || lowerHas())) {
      // Below a directory a command deleted, the workspace must show again: the whiteout goes, so the whole directory
      // shows, and the staged deletions in it are laid again by the runner (what prepare lists). Below a file or an
      // opaque directory that cannot be done by removing one entry.
      if (whiteoutAbove === null || opaque) return false;
      this.remove(whiteoutAbove, false);
      blocked = false;
    }
    const cur = blocked ? null : lstatOrNull(up);
    if (want === undefined) {
      if (opaque && lowerHas()) return false;
      if (cur) {
        this.remove(rel, cur.isDirectory());
        this.prune(rel);
      }
      return true;
    }
    if (cur?.isFile() && (cur.mode & 0o7777) === want.mode && cur.size === want.bytes.length && same(up, want.bytes))
      return true;
    if (cur) this.remove(rel, cur.isDirectory());
    try {
      for (let i = 1; i < parts.length; i++) {
        const d = parts.slice(0, i).join("/");
        const dest = join(this.upper, d);
        if (lstatOrNull(dest)) continue;
        mkdirSync(dest);
        // A merged directory shows the upper one's mode and times: give it the workspace's.
        const st = lstatOrNull(join(this.ws.root, d));
        if (st?.isDirectory()) {
          chmodSync(dest, st.mode & 0o7777);
          utimesSync(dest, st.atimeMs / 1000, st.mtimeMs / 1000);
        }
        this.note(d, false);
      }
      writeFileSync(up, want.bytes, { mode: want.mode });
      // The umask filters the mode given to writeFileSync; the command must see the staged mode exactly.
      chmodSync(up, want.mode);
      this.note(rel, true);
    } catch (error) {
      notes.push(
        `Note: the staged file ${rel} could not be placed in the scratch (${(error as NodeJS.ErrnoException).code ?? String(error)}).`,
      );
    }
    return true;
  }

  /** Removes the upper layer's entry at `rel` (and, for a directory, everything below) and forgets it. */
  private remove(rel: string, dir: boolean): void {
    const up = join(this.upper, rel);
    if (dir) disposeScratch({ root: up });
    else rmSync(up, { force: true });
    this.baseline.delete(rel);
    if (dir) for (const k of [...this.baseline.keys()]) if (k.startsWith(rel + "/")) this.baseline.delete(k);
  }

  /** Removes the now empty upper directories above `rel` that the workspace does not have (they would show as empty directories). */
  private prune(rel: string): void {
    for (let d = dirname(rel); d !== "."; d = dirname(d)) {
      if (this.baseline.get(d)?.opaque || lstatOrNull(join(this.ws.root, d))) return;
      try {
        if (readdirSync(join(this.upper, d)).length > 0) return;
        rmdirSync(join(this.upper, d));
      } catch {
        // Not empty or gone: nothing to prune.
        return;
      }
      this.baseline.delete(d);
    }
  }

  private note(rel: string, fresh: boolean): void {
    const st = lstatOrNull(join(this.upper, rel));
    if (st) this.baseline.set(rel, { ...upperEntry(st), ...(fresh ? { fresh: true } : {}) });
  }
}

/** What a placeholder holds: nothing (one array, so the laid and wanted bytes compare equal between commands). */
const PLACEHOLDER = new Uint8Array(0);

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    // Gone: null, the caller's 'not there'.
    return null;
  }
}

/** True when the file at `path` holds exactly `bytes`. */
function same(path: string, bytes: Uint8Array): boolean {
  try {
    return Buffer.compare(readFileSync(path), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) === 0;
  } catch {
    // Unreadable: not the same, so the file is laid again.
    return false;
  }
}

/**
 * The kept scratch of one run_command tool, that is of one run: made by the
 * first command, used by one command at a time (two overlays must never
 * share an upper layer), removed by close.
 */
export class ScratchKeeper {
  private kept: KeptScratch | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  /** Runs `fn` with the kept scratch of `ws` and `fs` once the commands before it are done. */
  use<T>(ws: Workspace, fs: FileOps, parent: string | undefined, fn: (k: KeptScratch) => Promise<T>): Promise<T> {
    const next = this.queue.then(() => {
      if (this.kept && (this.kept.ws.root !== ws.root || this.kept.fs !== fs)) this.drop();
      this.kept ??= KeptScratch.open(ws, fs, parent);
      return fn(this.kept);
    });
    this.queue = next.catch(() => {});
    return next;
  }

  /** The kept scratch now, if any (tests and benchmarks look at it). */
  get current(): KeptScratch | null {
    return this.kept;
  }

  /** Removes the kept scratch once the command using it (if any) is done: the run ended. False when something could not be removed. */
  close(): Promise<boolean> {
    const done = this.queue.then(async () => {
      await this.kept?.idle();
      return this.drop();
    });
    this.queue = done.catch(() => {});
    return done;
  }

  private drop(): boolean {
    const k = this.kept;
    this.kept = null;
    return k ? k.dispose() : true;
  }
}
