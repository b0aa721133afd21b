import { mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { isInside, realPathLoose } from "../workspace.ts";

/** Directory names that hold installed dependencies: shared with the command, never copied. */
export const DEPENDENCY_DIRS: readonly string[] = ["node_modules", ".venv", "venv", ".tox", "bower_components"];

/** True when `dir` holds more than `limit` entries in all (stops counting past it). */
export function countOver(dir: string, limit: number): boolean {
  let n = 0;
  const stack = [dir];
  while (stack.length > 0) {
    let entries;
    try {
      const current = stack.pop()!;
      entries = readdirSync(current, { withFileTypes: true }).map((e) => ({
        path: join(current, e.name),
        dir: e.isDirectory(),
      }));
    } catch {
      // Unreadable to Pencil: nothing below it is shared or listed.
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
export interface SharedScan {
  /** Entries the policy hides (a hidden directory is listed once, not entered). */
  hidden: { path: string; dir: boolean }[];
  /** Links whose target is in the workspace but outside this directory (a workspace package linked into node_modules). */
  inward: { path: string; target: string }[];
}

/**
 * Finds, below the shared directory `dir`, the entries the policy hides and the links that lead back into the
 * workspace. A link that leads out of it is judged by `linkVisible` (default `visible`), as in a copy: a virtualenv's
 * bin/python into /usr stays.
 */
export function scanShared(
  dir: string,
  wsRoot: string,
  visible: (real: string) => boolean,
  linkVisible: (real: string) => boolean = visible,
): SharedScan {
  const found: SharedScan = { hidden: [], inward: [] };
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      // Unreadable to Pencil: nothing below it is shared or listed.
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
      if (!(isInside(wsRoot, target) ? visible : linkVisible)(target)) found.hidden.push({ path, dir: false });
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
export function linkAround(real: string, dest: string, special: ReadonlyMap<string, string | null>): void {
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
