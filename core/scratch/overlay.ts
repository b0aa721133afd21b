import { spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
  type Stats,
} from "node:fs";
import { join } from "node:path";

/** The overlay layers of a copy-on-write scratch: the command sees `lower` with `upper` over it; what it changed is exactly `upper`. */
export interface OverlayLayers {
  /** The real workspace: the read-only lower layer. */
  lower: string;
  /** The private upper directory (the staged changes are written into it before the command). */
  upper: string;
  /** overlayfs's work directory (same file system as `upper`). */
  work: string;
  /** Workspace-relative paths of staged files written into `upper`. */
  placed: string[];
  /** Workspace-relative paths of staged deletions, removed through the overlay before the command (whiteouts in `upper`). */
  deletions: string[];
  /** Workspace-relative paths of entries the policy hides, removed through the overlay before the command (so they are absent, as from a copy); the diff ignores their whiteouts. */
  hidden: string[];
  /** The upper layer as it was when the command started (kept for the run): what the diff compares against; absent: it was empty. */
  baseline?: Map<string, UpperEntry>;
  /** Set by the diff: the upper layer as it walked it after the command (the next command's baseline). */
  after?: Map<string, UpperEntry>;
  /** Settings files the agent created (staged, not on disk), laid empty in `upper` so their filtered copies can be bound on them. */
  placeholders?: string[];
}

/** One entry of an overlay's upper layer, enough to tell whether a command touched it. */
export interface UpperEntry {
  kind: "file" | "link" | "other" | "dir" | "whiteout";
  ino: number;
  size: number;
  mode: number;
  mtimeMs: number;
  ctimeMs: number;
  /** A directory marked opaque: the lower layer's entries below it do not show. */
  opaque?: boolean;
  /** Written just before the command: compared by content, since a write in the same clock tick would leave its times unchanged. */
  fresh?: boolean;
}

/** The UpperEntry of an lstat result (`opaque` and `fresh` left to the caller). */
export function upperEntry(st: Stats): UpperEntry {
  return {
    kind: st.isDirectory()
      ? "dir"
      : st.isFile()
        ? "file"
        : st.isSymbolicLink()
          ? "link"
          : st.isCharacterDevice() && st.rdev === 0
            ? "whiteout"
            : "other",
    ino: st.ino,
    size: st.size,
    mode: st.mode & 0o7777,
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs,
  };
}

/** True when `st` is still what `e` recorded (same inode, kind, size, mode and times). */
export function sameUpper(e: UpperEntry, st: Stats): boolean {
  const now = upperEntry(st);
  return (
    e.kind === now.kind &&
    e.ino === now.ino &&
    e.size === now.size &&
    e.mode === now.mode &&
    e.mtimeMs === now.mtimeMs &&
    e.ctimeMs === now.ctimeMs
  );
}

/** Which scratch run_command uses: a copy-on-write overlay, a copy, or the overlay where it works (default). */
export type ScratchKind = "overlay" | "copy" | "auto";

/** The env variable that forces the copy (`PENCIL_SCRATCH=copy`), e.g. where overlayfs misbehaves. */
export const SCRATCH_ENV = "PENCIL_SCRATCH";

const probed = new Map<string, boolean>();

/**
 * Whether an unprivileged overlay mount works for a workspace on `lower`'s
 * file system with its upper layer in `parent`: mounted inside a user and
 * mount namespace with `userxattr`, a deletion leaves a whiteout (character
 * device 0/0) and a directory removed and made again is marked opaque in a
 * way this process can read (probed once per pair, then cached).
 */
export function overlayWorks(lower: string, parent: string): boolean {
  const key = `${lower}\0${parent}`;
  let ok = probed.get(key);
  if (ok === undefined) {
    const t = prepareProbe(parent);
    ok = t === null ? false : judgeProbe(t, () => spawnSync("unshare", probeArgv(t, lower), PROBE_SPAWN).status);
    probed.set(key, ok);
  }
  return ok;
}

/** overlayWorks without blocking: its processes run while the caller does other work; the answer is shared with it. */
export function overlayProbe(lower: string, parent: string): Promise<boolean> {
  const key = `${lower}\0${parent}`;
  const known = probed.get(key);
  if (known !== undefined) return Promise.resolve(known);
  let pending = probing.get(key);
  if (pending === undefined) {
    const t = prepareProbe(parent);
    pending = (
      t === null
        ? Promise.resolve(false)
        : new Promise<number | null>((resolve) => {
            const { timeout, ...options } = PROBE_SPAWN;
            const child = spawn("unshare", probeArgv(t, lower), options);
            const timer = setTimeout(() => child.kill("SIGKILL"), timeout);
            child.on("error", () => resolve(null));
            child.on("exit", (code) => {
              clearTimeout(timer);
              resolve(code);
            });
          }).then((status) => judgeProbe(t, () => status))
    ).then((ok) => {
      if (!probed.has(key)) probed.set(key, ok);
      probing.delete(key);
      return probed.get(key)!;
    });
    probing.set(key, pending);
  }
  return pending;
}

const probing = new Map<string, Promise<boolean>>();

const PROBE = `set -e
T=$1; L=$2
mount -t overlay pencil-probe -o "userxattr,redirect_dir=nofollow,metacopy=off,lowerdir=$T/l:$L,upperdir=$T/u,workdir=$T/w" "$T/m"
rm "$T/m/f"
rm -r "$T/m/d"
mkdir "$T/m/d"`;

const PROBE_SPAWN = { stdio: "ignore", timeout: 5000 } as const;

const probeArgv = (t: string, lower: string) => [
  "--user",
  "--map-current-user",
  "--mount",
  "bash",
  "-c",
  PROBE,
  "probe",
  t,
  lower,
];

/** The probe's directory in `parent`, laid out; null where the overlay cannot be probed (not Linux, no room). */
function prepareProbe(parent: string): string | null {
  if (process.platform !== "linux" || opaqueAt("/") === undefined) return null;
  let t: string;
  try {
    t = mkdtempSync(join(parent, "pencil-overlay-probe-"));
  } catch {
    // No room for the probe: the copy is used instead of the overlay.
    return null;
  }
  try {
    for (const d of ["l", "l/d", "u", "w", "m"]) mkdirSync(join(t, d));
    writeFileSync(join(t, "l", "f"), "");
    writeFileSync(join(t, "l", "d", "g"), "");
    return t;
  } catch {
    // A probe that cannot be laid out means the overlay is not used: the copy works everywhere.
    rmSync(t, { recursive: true, force: true });
    return null;
  }
}

/** Whether the probe in `t` passed (its run's `status` 0, a whiteout and an opaque directory left); removes `t`. */
function judgeProbe(t: string, status: () => number | null): boolean {
  try {
    if (status() !== 0) return false;
    return isWhiteout(join(t, "u", "f")) && opaqueAt(join(t, "u", "d")) === true;
  } catch {
    // A probe that fails means the overlay is not used: the copy works everywhere.
    return false;
  } finally {
    rmSync(t, { recursive: true, force: true });
  }
}

/** True when `path` is an overlayfs whiteout: a character device 0/0. */
function isWhiteout(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isCharacterDevice() && st.rdev === 0;
  } catch {
    // Gone: not a whiteout.
    return false;
  }
}

type FGetXattr = (fd: number, name: Uint8Array, value: Uint8Array, size: number) => number | bigint;
let fgetxattr: FGetXattr | null | undefined;

function loadXattr(): FGetXattr | null {
  try {
    // bun:ffi, loaded only here: libc's fgetxattr reads an upper directory's opaque mark on the descriptor the walk holds.
    const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi");
    const lib = dlopen("libc.so.6", {
      fgetxattr: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr, FFIType.u64], returns: FFIType.i64 },
    });
    return lib.symbols.fgetxattr as unknown as FGetXattr;
  } catch {
    // No libc to load: opaque marks cannot be read, so the overlay is not used (overlayWorks asks this).
    return null;
  }
}

const OPAQUE = new TextEncoder().encode("user.overlay.opaque\0");

/**
 * Whether the upper directory open as `fd` is opaque (overlayfs's
 * `user.overlay.opaque` is `y`: the lower directory's entries no longer
 * show); undefined when extended attributes cannot be read here.
 */
export function readOpaque(fd: number): boolean | undefined {
  if (fgetxattr === undefined) fgetxattr = loadXattr();
  if (fgetxattr === null) return undefined;
  const value = new Uint8Array(4);
  const n = Number(fgetxattr(fd, OPAQUE, value, value.length));
  return n > 0 && value[0] === 0x79; // "y"
}

/** readOpaque of a directory by path (links not followed). */
function opaqueAt(path: string): boolean | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    // Not a directory one can open: unknown, which the caller treats as cannot tell.
    return undefined;
  }
  try {
    return readOpaque(fd);
  } finally {
    closeSync(fd);
  }
}
