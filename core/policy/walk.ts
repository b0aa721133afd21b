import ignore, { type Ignore } from "ignore";
import picomatch from "picomatch";
import { basename, dirname, join, relative, sep } from "node:path";
import type { DirEntry, FileOps } from "../file-ops.ts";
import { isSecretFileName } from "./policy.ts";
import { isInside, realPathLoose } from "../workspace.ts";

/** A path the overlay changed: staged content, or a staged deletion. */
export interface StagedPath {
  real: string;
  deleted: boolean;
}

/** FileOps that may be the overlay, which also tells what it staged; the plain disk has no `staged`. */
type MaybeStaged = FileOps & { staged?: () => Iterable<StagedPath> };

/** Suffixes of `.env.<suffix>` files that hold no secrets by convention and may be shown. */
export const SECRET_ENV_EXCEPTIONS: readonly string[] = ["example", "sample", "template"];

/**
 * True for `.env` and `.env.*` names (except the SECRET_ENV_EXCEPTIONS), in any case as the
 * policy judges them (a case-insensitive disk opens `.ENV` for `.env`): never listed, searched or walked into.
 */
function isSecretEnvName(name: string): boolean {
  const lower = name.toLowerCase();
  if (lower === ".env") return true;
  return lower.startsWith(".env.") && !SECRET_ENV_EXCEPTIONS.includes(lower.slice(5));
}

/** True for names never listed, searched or walked into: `.env` files and the built-in credential files (policy's SECRET_FILE_NAMES and key files). */
export function isSecretName(name: string): boolean {
  return isSecretEnvName(name) || isSecretFileName(name);
}

/** The overlay's staged paths, indexed for walkers: what is staged, what is deleted, and new entries per directory. */
export class StagedIndex {
  /** Every staged path, mapped to true when the change is a deletion. */
  readonly paths = new Map<string, boolean>();
  private readonly created = new Map<string, Map<string, "file" | "dir">>();

  constructor(items: Iterable<StagedPath>) {
    for (const { real, deleted } of items) {
      this.paths.set(real, deleted);
      if (deleted) continue;
      // A staged file may sit in directories that exist only in the overlay: index them all.
      let child = real;
      let kind: "file" | "dir" = "file";
      for (let dir = dirname(child); dir !== child; child = dir, dir = dirname(dir), kind = "dir") {
        let kids = this.created.get(dir);
        if (!kids) this.created.set(dir, (kids = new Map()));
        if (kids.get(basename(child)) === "dir") break;
        kids.set(basename(child), kind);
      }
    }
  }

  /** The staged paths of `fs` (empty for the plain disk). */
  static of(fs: FileOps): StagedIndex {
    const staged = (fs as MaybeStaged).staged;
    return new StagedIndex(typeof staged === "function" ? staged.call(fs) : []);
  }

  /** True when `real` has staged content (not a deletion). */
  hasContent(real: string): boolean {
    return this.paths.get(real) === false;
  }

  /** True when `real` is staged for deletion. */
  isDeleted(real: string): boolean {
    return this.paths.get(real) === true;
  }

  /** Entries staged directly inside `dir` (new files, and directories leading to them). */
  createdIn(dir: string): ReadonlyMap<string, "file" | "dir"> | undefined {
    return this.created.get(dir);
  }
}

/** The .gitignore rules of one directory, chained to those of its parent directory. */
interface Frame {
  dir: string;
  rules: Ignore;
  parent: Frame | null;
}

/** What decides which paths a walk admits. */
export interface WalkRulesOptions {
  fs: FileOps;
  /** The directory whose .gitignore, and every one below it, applies: the workspace root (or the walk root outside it). */
  top: string;
  /** Policy visibility of a path (its name and content); false hides it, and a directory's whole subtree. */
  visible?: (real: string) => boolean;
  /** Staged paths, so entries created or deleted in the overlay are seen as the overlay sees them. */
  staged?: StagedIndex;
  /** The directory the caller asked for. When a parent's .gitignore ignores it, that file's rules do not apply inside it: asking for an ignored directory (say node_modules/x) shows it. */
  root?: string;
}

/**
 * Which entries a walk admits: never `.git` nor secret env files, nothing the
 * policy hides, nothing a `.gitignore` (from `top` down to the entry's
 * directory) ignores. The deepest `.gitignore` with an opinion decides, and in
 * one file the last matching line does, as in git. A directory an outer file
 * ignores stays ignored below even if an inner file re-includes it (the `ignore`
 * package's reading, a little stricter than git's). A directory asked for
 * explicitly is walked even when ignored (see WalkRulesOptions.root).
 */
export class WalkRules {
  readonly fs: FileOps;
  readonly top: string;
  readonly staged: StagedIndex;
  private readonly visible: (real: string) => boolean;
  private readonly frames = new Map<string, Frame | null>();
  private readonly dirs = new Map<string, boolean>();
  private readonly ignoredDirs = new Map<string, boolean>();
  // Directories whose .gitignore ignores the root asked for: their rules are left out below it.
  private readonly waived = new Set<string>();

  constructor(options: WalkRulesOptions) {
    this.fs = options.fs;
    this.top = options.top;
    this.visible = options.visible ?? (() => true);
    this.staged = options.staged ?? StagedIndex.of(options.fs);
    const root = options.root;
    if (root === undefined || !isInside(this.top, root)) return;
    for (let d = dirname(root); root !== this.top && isInside(this.top, d); d = dirname(d)) {
      const own = this.frameOf(d);
      if (own?.dir === d && own.rules.test(toPosix(relative(d, root)) + "/").ignored) this.waived.add(d);
      if (d === this.top) break;
    }
  }

  /** True when the entry `name` (at `real`, of `kind`) of an already admitted directory is admitted. */
  admits(real: string, name: string, kind: DirEntry["kind"]): boolean {
    if (name === ".git" || isSecretName(name)) return false;
    if (this.ignored(real, kind === "dir")) return false;
    return this.visible(real);
  }

  /** True when `real` and every directory between `from` (excluded) and it is admitted: the walk from `from` would meet it. */
  admitsPath(real: string, kind: DirEntry["kind"], from: string): boolean {
    if (!isInside(from, real) || real === from) return false;
    const parent = dirname(real);
    if (parent !== from && !this.admitsDir(parent, from)) return false;
    return this.admits(real, basename(real), kind);
  }

  /** True when a `.gitignore` (from `top` down) ignores `real` (of `kind`) or a directory between `top` and it: build output, caches. */
  ignoredPath(real: string, kind: DirEntry["kind"]): boolean {
    if (!isInside(this.top, real) || real === this.top) return false;
    if (this.ignored(real, kind === "dir")) return true;
    for (let d = dirname(real); d !== this.top && isInside(this.top, d); d = dirname(d)) {
      let known = this.ignoredDirs.get(d);
      if (known === undefined) {
        known = this.ignored(d, true);
        this.ignoredDirs.set(d, known);
      }
      if (known) return true;
    }
    return false;
  }

  /** The .gitignore rules in force in `dir` (its own file and its ancestors' up to `top`); null when none. */
  private frameOf(dir: string): Frame | null {
    const cached = this.frames.get(dir);
    if (cached !== undefined) return cached;
    let parent: Frame | null = null;
    if (dir !== this.top && isInside(this.top, dir)) parent = this.frameOf(dirname(dir));
    else if (dir !== this.top) return null;
    const rules = this.loadIgnore(dir);
    const frame = rules ? { dir, rules, parent } : parent;
    this.frames.set(dir, frame);
    return frame;
  }

  /** Text of the .gitignore files from `top` down to `dir` excluded, outermost first, with their directories. */
  ancestorIgnores(dir: string): { dir: string; text: string }[] {
    const out: { dir: string; text: string }[] = [];
    if (!isInside(this.top, dir)) return out;
    for (let d = dirname(dir); isInside(this.top, d); d = dirname(d)) {
      const text = this.waived.has(d) ? null : this.readIgnoreText(d);
      if (text !== null) out.unshift({ dir: d, text });
      if (d === this.top) break;
    }
    return out;
  }

  private admitsDir(dir: string, from: string): boolean {
    const known = this.dirs.get(dir);
    if (known !== undefined) return known;
    const parent = dirname(dir);
    const ok = (parent === from || this.admitsDir(parent, from)) && this.admits(dir, basename(dir), "dir");
    this.dirs.set(dir, ok);
    return ok;
  }

  private ignored(real: string, isDir: boolean): boolean {
    for (let f = this.frameOf(dirname(real)); f; f = f.parent) {
      if (this.waived.has(f.dir)) continue;
      const rel = toPosix(relative(f.dir, real));
      const verdict = f.rules.test(isDir ? rel + "/" : rel);
      if (verdict.ignored) return true;
      if (verdict.unignored) return false;
    }
    return false;
  }

  private loadIgnore(dir: string): Ignore | null {
    const text = this.readIgnoreText(dir);
    // Case-sensitive like git on Linux and ripgrep; the package's default is to fold case.
    return text === null ? null : ignore({ ignorecase: false }).add(text);
  }

  private readIgnoreText(dir: string): string | null {
    const file = join(dir, ".gitignore");
    try {
      // A .gitignore that is a link could point anywhere (~/.ssh/id_ed25519): only a plain file the policy lets us read counts.
      if (realPathLoose(file).real !== file || !this.visible(file)) return null;
      if (this.fs.stat(file)?.kind !== "file") return null;
      return new TextDecoder().decode(this.fs.readBytes(file));
    } catch {
      // A .gitignore that cannot be read ignores nothing, as for git.
      return null;
    }
  }
}

/** One entry met by a walk. */
export interface WalkEntry {
  real: string;
  name: string;
  kind: DirEntry["kind"];
  /** Path relative to the walk root, `/`-separated. */
  rel: string;
}

/**
 * Walks `root` depth first, children in name order, calling `visit` for every
 * admitted entry; directories are entered after their own visit. Symbolic links
 * are reported, never followed. `visit` returns false to stop the whole walk.
 */
export function walk(
  root: string,
  rules: WalkRules,
  // biome-ignore lint/suspicious/noConfusingVoidType: visitors that return nothing keep the walk going
  visit: (entry: WalkEntry) => boolean | void,
  signal?: AbortSignal,
): void {
  let stopped = false;
  const visitDir = (dir: string, relDir: string): void => {
    for (const entry of listDir(rules, dir)) {
      if (stopped || signal?.aborted) return;
      const real = join(dir, entry.name);
      if (!rules.admits(real, entry.name, entry.kind)) continue;
      const rel = relDir === "" ? entry.name : `${relDir}/${entry.name}`;
      if (visit({ real, name: entry.name, kind: entry.kind, rel }) === false) {
        stopped = true;
        return;
      }
      if (entry.kind === "dir") visitDir(real, rel);
    }
  };
  visitDir(root, "");
}

/** The entries of `dir` as the staged view has them (created ones added, deleted ones gone), in name order. */
function listDir(rules: WalkRules, dir: string): DirEntry[] {
  let entries: DirEntry[];
  try {
    entries = rules.fs.readDir(dir);
  } catch {
    // An unreadable directory: nothing in it is walked (nor readable by the tools).
    entries = [];
  }
  const staged = rules.staged;
  const created = staged.createdIn(dir);
  if (staged.paths.size > 0) {
    const byName = new Map<string, DirEntry>();
    for (const e of entries) if (!staged.isDeleted(join(dir, e.name))) byName.set(e.name, e);
    if (created) for (const [name, kind] of created) if (!byName.has(name)) byName.set(name, { name, kind });
    entries = [...byName.values()];
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Orders `/`-separated paths segment by segment, so a directory's entries follow it directly (tree order). */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x === 47) return -1;
    if (y === 47) return 1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * A test for paths relative to a base directory: a glob without `/` matches the
 * name at any depth (like .gitignore and ripgrep), one with `/` the whole
 * relative path. Dotfiles match too.
 */
export function globTest(glob: string): (rel: string) => boolean {
  const pattern = glob.replace(/^\.\//, "").replace(/^\/+/, "");
  const negated = pattern.startsWith("!");
  const body = negated ? pattern.slice(1) : pattern;
  const match = picomatch(body, { dot: true });
  const byName = !body.includes("/");
  const test = byName ? (rel: string) => match(rel.slice(rel.lastIndexOf("/") + 1)) : (rel: string) => match(rel);
  return negated ? (rel) => !test(rel) : test;
}

function toPosix(p: string): string {
  return sep === "/" ? p : p.split(sep).join("/");
}
