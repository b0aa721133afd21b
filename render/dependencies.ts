import { posix } from "node:path";
import type { Changeset } from "../core/staging/changeset.ts";
import { decodeText } from "../core/text.ts";

/** One file of a changeset that needs another of the same changeset: `from` imports `to`. */
export interface FileDependency {
  from: string;
  to: string;
}

// Relative module specifiers in JS/TS (import/export … from, import(), require()) and CSS/Sass @import.
const SPECIFIERS =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+|@import\s+)["'](\.{1,2}\/[^"'\n]+)["']/g;
const STRIP = /\.(?:[cm]?[jt]sx?|d\.ts)$/;

/**
 * Which files of a changeset import which others, read from their staged content:
 * a partial approval (the test without the module it tests) would leave the code
 * failing. Only relative imports count; with `readUnchanged` (a workspace-relative
 * path → its text on disk, or null), imports through files the changeset leaves
 * alone are followed too, up to `hops` files deep (a test importing src/index.ts,
 * which re-exports the changed src/slugify.ts).
 */
export function findDependencies(
  cs: Changeset,
  readUnchanged?: (path: string) => string | null,
  hops = 2,
): FileDependency[] {
  const inChangeset = new Map<string, string>();
  for (const f of cs.files) for (const key of keysOf(f.path)) inChangeset.set(key, f.path);
  const staged = new Map<string, string>();
  for (const f of cs.files) {
    if (!f.after || f.binary) continue;
    const text = decodeText(f.after.bytes)?.text;
    if (text) staged.set(f.path, text);
  }
  const diskCache = new Map<string, string | null>();
  const onDisk = (target: string): { path: string; text: string } | null => {
    if (!readUnchanged) return null;
    for (const candidate of candidatesOf(target)) {
      if (!diskCache.has(candidate)) diskCache.set(candidate, readUnchanged(candidate));
      const text = diskCache.get(candidate);
      if (text) return { path: candidate, text };
    }
    return null;
  };
  const found: FileDependency[] = [];
  for (const [from, text] of staged) {
    const reached = new Set<string>();
    const visit = (path: string, source: string, depth: number, visited: Set<string>) => {
      for (const match of source.matchAll(SPECIFIERS)) {
        const target = posix.normalize(posix.join(posix.dirname(path), match[1]!));
        const to = inChangeset.get(target) ?? inChangeset.get(target.replace(STRIP, ""));
        if (to) {
          if (to !== from) reached.add(to);
          continue;
        }
        if (depth >= hops) continue;
        const next = onDisk(target);
        if (next && !visited.has(next.path)) visit(next.path, next.text, depth + 1, new Set([...visited, next.path]));
      }
    };
    visit(from, text, 0, new Set([from]));
    for (const to of reached) found.push({ from, to });
  }
  return found;
}

/** The names an import can use for a file: its path, without its extension, its directory for an index file. */
function keysOf(path: string): string[] {
  const keys = [path, path.replace(STRIP, "")];
  const indexDir = /^(.*)\/index\.[cm]?[jt]sx?$/.exec(path)?.[1];
  if (indexDir) keys.push(indexDir);
  return keys;
}

/** The files an import specifier may name on disk. */
function candidatesOf(target: string): string[] {
  if (STRIP.test(target)) return [target];
  return [target, ...[".ts", ".tsx", ".js", ".mjs", "/index.ts", "/index.js"].map((ext) => target + ext)];
}

/** The dependencies a set of decisions breaks: an approved file that imports one that is not written. */
export function splitDependencies(
  deps: FileDependency[],
  approved: Iterable<string>,
  notWritten: Iterable<string>,
): FileDependency[] {
  const yes = new Set(approved);
  const no = new Set(notWritten);
  return deps.filter((d) => yes.has(d.from) && no.has(d.to));
}
