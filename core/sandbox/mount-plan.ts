import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { smallFileBytes } from "../read-small-file.ts";
import type { Scratch } from "../scratch/types.ts";
import type { Hiding } from "./hiding.ts";

/**
 * One step of the namespace sandbox's mount setup, in the order the runner
 * takes them. Every path is absolute and real.
 */
export type MountStep =
  /** Copy-on-write: an overlay of `lower` (the workspace, read-only) under `upper` mounted at `target` (the scratch's mount point), first of all. */
  | { op: "overlay"; lower: string; upper: string; work: string; target: string }
  /** A staged deletion or an entry the policy hides, removed through the overlay before the command (it leaves a whiteout in the upper layer). */
  | { op: "whiteout"; path: string }
  /** A real directory bound read-only into the copy (a shared dependency directory, git's object store). */
  | { op: "bind"; source: string; target: string }
  /** An entry below a bound directory that the policy hides: covered by an empty directory or /dev/null. */
  | { op: "mask"; path: string; dir: boolean }
  /** A host directory covered by `source` (an empty directory prepared in the scratch) or a fresh tmpfs; `writable` only for private temporary space. */
  | { op: "cover"; path: string; source: string; tmpfs: boolean; writable: boolean; index: number }
  /** A directory below cover `cover` bound back (read-only, except the workspace and the scratch). */
  | { op: "keep"; path: string; cover: number }
  /** A directory to make in tmpfs cover `cover` once it is mounted, for what lands in it. */
  | { op: "mount-point"; path: string; cover: number }
  /** A path masked wherever it is still reachable after the covers (credentials, sockets, .env files). */
  | { op: "secret"; path: string }
  /** A settings file masked as a secret, shown again as its credential-free copy `source` (in the scratch), read-only, after every mask. */
  | { op: "filtered"; source: string; target: string };

/** An empty directory the plan needs in the scratch before the namespace starts: a cover's source, with its mount points. */
interface CoverDir {
  dir: string;
  mode: number;
  /** Directories to make inside it (relative), where keeps and inner covers land. */
  mountPoints: string[];
  /** Files copied into it, read-only (Cover.files): where (relative) and from (the host's real path). */
  files?: { rel: string; from: string }[];
}

/** Largest version file copied into a cover: anything bigger is not one. */
const MAX_VERSION_FILE_BYTES = 64 * 1024;

/** The namespace sandbox as data: the steps the runner takes and the directories it needs prepared. */
export interface MountPlan {
  steps: MountStep[];
  coverDirs: CoverDir[];
}

/**
 * Plans the mounts for a scratch copy and what must be hidden (pure: no file
 * system access). Binds come before the masks that lie in them; covers come
 * outermost first, each followed by what it keeps; secrets come last, so
 * nothing mounted after them can show them again.
 */
export function planMounts(
  s: Pick<Scratch, "root" | "mounts" | "shared"> & Partial<Pick<Scratch, "dir" | "overlay" | "filteredOver">>,
  hiding: Hiding | null,
): MountPlan {
  const steps: MountStep[] = [];
  const coverDirs: CoverDir[] = [];
  const ov = s.overlay;
  if (ov && s.dir) {
    steps.push({ op: "overlay", lower: ov.lower, upper: ov.upper, work: ov.work, target: s.dir });
    for (const rel of [...ov.deletions, ...ov.hidden]) steps.push({ op: "whiteout", path: join(s.dir, rel) });
  }
  for (const m of s.mounts) steps.push({ op: "bind", source: m.source, target: m.target });
  for (const sd of s.shared) for (const m of sd.masks) steps.push({ op: "mask", path: m.path, dir: m.dir });
  (hiding?.covers ?? []).forEach((c, index) => {
    const tmpfs = c.with === "tmpfs";
    let source = "tmpfs";
    if (!tmpfs) {
      // An empty directory with the mount points made beforehand (one process less each in the namespace).
      source = join(s.root, `cover-${index}`);
      coverDirs.push({
        dir: source,
        mode: c.writable ? 0o1777 : 0o755,
        mountPoints: c.mountPoints.map((p) => relative(c.path, p)),
        ...(c.files?.length ? { files: c.files.map((from) => ({ rel: relative(c.path, from), from })) } : {}),
      });
    } else {
      for (const p of c.mountPoints) steps.push({ op: "mount-point", path: p, cover: index });
    }
    steps.push({ op: "cover", path: c.path, source, tmpfs, writable: c.writable, index });
    for (const k of c.keeps) steps.push({ op: "keep", path: k, cover: index });
  });
  for (const x of hiding?.secrets ?? []) steps.push({ op: "secret", path: x });
  for (const f of s.filteredOver ?? []) steps.push({ op: "filtered", source: f.source, target: f.target });
  return { steps, coverDirs };
}

/** Makes the plan's cover directories in the scratch. */
export function prepareCoverDirs(plan: MountPlan): void {
  for (const c of plan.coverDirs) {
    mkdirSync(c.dir);
    chmodSync(c.dir, c.mode);
    for (const p of c.mountPoints) mkdirSync(join(c.dir, p), { recursive: true, mode: 0o755 });
    for (const f of c.files ?? []) {
      // Gone, unreadable or replaced since the plan: not shown.
      const bytes = smallFileBytes(f.from, MAX_VERSION_FILE_BYTES);
      if (bytes === null) continue;
      try {
        mkdirSync(join(c.dir, dirname(f.rel)), { recursive: true, mode: 0o755 });
        writeFileSync(join(c.dir, f.rel), bytes, { mode: 0o444, flag: "wx" });
      } catch {
        // Something of the plan's own is at that path (a mount point): the version file is not shown, nothing else changes.
      }
    }
  }
}

/**
 * Everything the namespace setup (core/sandbox/namespace-setup.ts) needs, written as JSON into the scratch before the
 * namespace starts: the mount steps, and what to run once they are taken.
 */
export interface SetupPlan {
  /** The scratch directory: bound on itself, writable. */
  scratch: string;
  /** The copy (or the overlay's mount point) inside the scratch. */
  dir: string;
  /** Where `dir` is placed for the command: the workspace's own path (writable). */
  at: string;
  /** An empty directory, bound over what is hidden. */
  empty: string;
  steps: MountStep[];
  /** The write cap in 1024-byte blocks: the size of tmpfs covers and the largest file the command may write. */
  fileBlocks: number;
  /** setpriv, which drops every capability before `argv` runs. */
  setpriv: string;
  /** The program and its arguments, run in `at` with every capability dropped. */
  argv: string[];
  /** The program's environment ("NAME=value"): the setup itself runs with PATH alone, so nothing in it changes how the setup runs. */
  env: string[];
  /**
   * Start the program in a session (and process group) of its own: for a program started in Pencil's own process group
   * (a stdio server), so that what it signals as a group stays in the namespace. run_command's runner starts the
   * namespace detached already, and kills it by that group.
   */
  newSession?: boolean;
  /** Where the program's stderr goes: merged into stdout (run_command), or left as the setup's own (a server speaking on stdout). */
  stderr: "stdout" | "own";
  /** With the network on: the forwarder from the namespace's 127.0.0.1:port to the proxy's unix socket, run by `bun`. */
  forwarder?: { bun: string; script: string; socket: string; port: number };
}

/** What a command sees of the host under the plan, for people and tests: the scratch (a copy, or an overlay of the workspace), covered, kept, read-only binds, hidden. */
export function describePlan(plan: MountPlan): {
  scratch: string;
  covered: string[];
  writableCovers: string[];
  kept: string[];
  bound: string[];
  hidden: string[];
} {
  const covers = plan.steps.filter((x): x is Extract<MountStep, { op: "cover" }> => x.op === "cover");
  const ov = plan.steps.find((x): x is Extract<MountStep, { op: "overlay" }> => x.op === "overlay");
  return {
    scratch: ov ? `overlay of ${ov.lower}` : "copy",
    covered: covers.map((c) => c.path),
    writableCovers: covers.filter((c) => c.writable).map((c) => c.path),
    kept: plan.steps.flatMap((x) => (x.op === "keep" ? [x.path] : [])),
    bound: plan.steps.flatMap((x) => (x.op === "bind" ? [x.target] : [])),
    hidden: plan.steps.flatMap((x) => (x.op === "secret" || x.op === "mask" ? [x.path] : [])),
  };
}
