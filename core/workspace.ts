import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { PathError } from "./errors/path-error.ts";

/** Most symlinks followed while resolving one path; more means a loop or an abuse. */
const MAX_LINK_HOPS = 40;

/** A path given by the model, resolved to where a read or write would really land. */
export interface ResolvedPath {
  /** The text the caller gave. */
  input: string;
  /** The path with `~`, `..` and symlinks (dangling ones too) resolved: what the policy judges. */
  real: string;
  /** True when `real` is the workspace root or below it. */
  inside: boolean;
  /** `real` relative to the workspace root with `/` separators; null when outside. */
  relative: string | null;
  /** True when something exists at `real` now. */
  exists: boolean;
}

/** The workspace: its real root and the home directory `~` expands to. */
export interface Workspace {
  /** Real path of the workspace root (symlinks resolved). */
  root: string;
  /** Home directory used for `~` (real path). */
  home: string;
}

/** Opens a workspace directory, resolving it through any symlinks so every later check compares real paths. */
export function openWorkspace(dir: string, home: string = homedir()): Workspace {
  let root: string;
  try {
    root = realpathSync(resolve(dir));
  } catch {
    throw new PathError(`Workspace ${dir} does not exist: pass an existing directory with -w/--workspace.`);
  }
  if (!statSync(root).isDirectory()) {
    throw new PathError(
      `Workspace ${dir} is a file, not a directory: pass the project's directory with -w/--workspace.`,
    );
  }
  let realHome: string;
  try {
    realHome = realpathSync(home);
  } catch {
    // A home that does not resolve is compared as written.
    realHome = resolve(home);
  }
  return { root, home: realHome };
}

/**
 * Resolves `p` the way the kernel would for a write: every existing component is
 * looked at with lstat, symlinks are followed (also dangling ones, whose target a
 * write would create), and what does not exist yet is appended lexically.
 */
export function realPathLoose(p: string): { real: string; exists: boolean } {
  let pending = splitParts(p);
  let current: string = sep;
  let hops = 0;
  let missing = false;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === "." || part === "") continue;
    if (part === "..") {
      current = parentOf(current);
      // Climbing out of a missing directory may land on existing ones again: look at them.
      missing = false;
      continue;
    }
    const next = join(current, part);
    if (missing) {
      current = next;
      continue;
    }
    let isLink = false;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") {
        missing = true;
        current = next;
        continue;
      }
      throw new PathError(`Cannot inspect ${next}: ${code ?? String(error)}.`);
    }
    if (!isLink) {
      current = next;
      continue;
    }
    hops += 1;
    if (hops > MAX_LINK_HOPS) {
      throw new PathError(
        `Too many symbolic links (over ${MAX_LINK_HOPS}) resolving ${p}: a link loop? Use a path without it.`,
      );
    }
    const target = readlinkSync(next);
    pending = [...splitParts(isAbsolute(target) ? target : join(current, target)), ...pending];
    current = sep;
  }
  return { real: current, exists: !missing };
}

/**
 * The real path of `p` (made absolute first) as realPathLoose finds it; when it cannot be resolved (a link loop,
 * a directory that cannot be looked into) `p` as written, for a caller to whom nothing is reachable through it.
 */
export function realPathOrWritten(p: string): string {
  try {
    return realPathLoose(resolve(p)).real;
  } catch {
    return resolve(p);
  }
}

/** Resolves a model-given path against the workspace; throws PathError for input that names no path. */
export function resolveInWorkspace(ws: Workspace, input: string): ResolvedPath {
  if (typeof input !== "string" || input.trim() === "") {
    throw new PathError("The path is empty: give a file path relative to the workspace root, e.g. src/index.ts.");
  }
  if (input.includes("\0")) {
    throw new PathError("The path contains a NUL byte: give a plain file path.");
  }
  let expanded = input;
  if (input === "~") expanded = ws.home;
  else if (input.startsWith("~/")) expanded = join(ws.home, input.slice(2));
  const absolute = isAbsolute(expanded) ? expanded : join(ws.root, expanded);
  const { real, exists } = realPathLoose(absolute);
  const inside = isInside(ws.root, real);
  return {
    input,
    real,
    inside,
    relative: inside ? toPosix(relative(ws.root, real)) || "." : null,
    exists,
  };
}

/** True when `child` is `parent` or below it; both must be absolute, normalised paths. */
export function isInside(parent: string, child: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(prefix);
}

/** A path relative to the workspace with `/` separators, or the absolute path when outside. */
export function displayPath(ws: Workspace, real: string): string {
  return isInside(ws.root, real) ? toPosix(relative(ws.root, real)) || "." : real;
}

function toPosix(p: string): string {
  return sep === "/" ? p : p.split(sep).join("/");
}

function splitParts(p: string): string[] {
  return p.split(sep).filter((s) => s.length > 0);
}

function parentOf(p: string): string {
  if (p === sep) return sep;
  const i = p.lastIndexOf(sep);
  return i <= 0 ? sep : p.slice(0, i);
}
