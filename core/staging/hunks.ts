import { diffArrays } from "diff";
import { sha256 } from "../hash.ts";

/**
 * One hunk of a text change, as a unified diff shows it: the changed lines with up to
 * `context` unchanged lines around them. `from`/`to` are the old lines it replaces
 * (0-based, end exclusive, context left out) and `replacement` the new lines, each with
 * its own line ending, so that base + kept hunks can be rebuilt byte for byte.
 */
export interface Hunk {
  /** 0-based position among the file's hunks. */
  index: number;
  /** `@@ -a,b +c,d @@` starts and lengths, context included (1-based, as a unified diff counts). */
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** Display lines: a sign (` `, `-`, `+`) then the content without its line ending; `\` marks a missing final newline. */
  lines: string[];
  /** The old lines [from, to) this hunk replaces (0-based, no context). */
  from: number;
  to: number;
  /** The new lines put in their place, line endings included. */
  replacement: string[];
  /** SHA-256 over the hunk's place and exact content (old and new lines, endings included): what a keep or drop binds to. */
  digest: string;
}

/** A text split into lines that keep their endings (`\n` or `\r\n`); a last line without one stays as it is. */
export function rawLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", start)) {
    lines.push(text.slice(start, i + 1));
    start = i + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** Unchanged lines shown around each change (the terminal diff's default). */
const HUNK_CONTEXT = 3;

/**
 * The hunks of the change from `before` to `after`, grouped as a unified diff groups
 * them (changes at most 2 × context unchanged lines apart share a hunk). Lines are
 * compared exactly, endings included. Null when the diff gives up after `timeoutMs`.
 */
export function splitHunks(before: string, after: string, context = HUNK_CONTEXT, timeoutMs = 1000): Hunk[] | null {
  const oldLines = rawLines(before);
  const newLines = rawLines(after);
  // Lines compared as small integers (one per distinct line): the diff then compares numbers, not strings.
  const ids = new Map<string, number>();
  const idOf = (line: string) => {
    let id = ids.get(line);
    if (id === undefined) ids.set(line, (id = ids.size));
    return id;
  };
  const changes = anchoredDiff(oldLines.map(idOf), newLines.map(idOf), timeoutMs);
  if (!changes) return null;
  // Regions of change: old [oldFrom, oldTo) became new [newFrom, newTo).
  const regions: { oldFrom: number; oldTo: number; newFrom: number; newTo: number }[] = [];
  let o = 0;
  let n = 0;
  for (const change of changes) {
    const count = change.count;
    if (!change.added && !change.removed) {
      o += count;
      n += count;
      continue;
    }
    const last = regions[regions.length - 1];
    const region = last && last.oldTo === o && last.newTo === n ? last : undefined;
    const target = region ?? { oldFrom: o, oldTo: o, newFrom: n, newTo: n };
    if (change.removed) o += count;
    else n += count;
    target.oldTo = o;
    target.newTo = n;
    if (!region) regions.push(target);
  }
  // Regions close enough to share their context make one hunk, as `diff -u` prints them.
  const groups: (typeof regions)[] = [];
  for (const region of regions) {
    const group = groups[groups.length - 1];
    const prev = group?.[group.length - 1];
    if (group && prev && region.oldFrom - prev.oldTo <= 2 * context) group.push(region);
    else groups.push([region]);
  }
  return groups.map((group, index) => {
    const first = group[0]!;
    const last = group[group.length - 1]!;
    const lead = Math.min(context, first.oldFrom);
    const trail = Math.min(context, oldLines.length - last.oldTo);
    const lines: string[] = [];
    const push = (sign: string, line: string) => {
      lines.push(sign + stripEnding(line));
      if (!line.endsWith("\n")) lines.push("\\ No newline at end of file");
    };
    for (let i = first.oldFrom - lead; i < first.oldFrom; i++) push(" ", oldLines[i]!);
    group.forEach((region, k) => {
      for (let i = region.oldFrom; i < region.oldTo; i++) push("-", oldLines[i]!);
      for (let i = region.newFrom; i < region.newTo; i++) push("+", newLines[i]!);
      const next = group[k + 1];
      if (next) for (let i = region.oldTo; i < next.oldFrom; i++) push(" ", oldLines[i]!);
    });
    for (let i = last.oldTo; i < last.oldTo + trail; i++) push(" ", oldLines[i]!);
    const oldCount = last.oldTo - first.oldFrom + lead + trail;
    const newCount = last.newTo - first.newFrom + lead + trail;
    const replacement = newLines.slice(first.newFrom, last.newTo);
    const removed = oldLines.slice(first.oldFrom, last.oldTo);
    return {
      index,
      // A unified diff numbers an empty side from the line before it; the renderer adjusts, so keep 1-based starts.
      oldStart: first.oldFrom - lead + 1,
      oldLines: oldCount,
      newStart: first.newFrom - lead + 1,
      newLines: newCount,
      lines,
      from: first.oldFrom,
      to: last.oldTo,
      replacement,
      digest: sha256(JSON.stringify([first.oldFrom, last.oldTo, removed, replacement])),
    };
  });
}

/** One run of a line diff: `count` lines equal, removed or added. */
interface LineRun {
  count: number;
  added?: boolean;
  removed?: boolean;
}

/**
 * A line diff that first pairs the lines found exactly once on each side (as patience
 * diff does), in order, and runs the diff package's Myers diff only on the gaps between
 * them: a long file with edits spread through it is then many small diffs instead of one
 * large one. Any edit script it gives is exact (equal runs are equal lines), so the
 * hunks rebuild byte for byte. Null when a gap's diff gives up.
 */
function anchoredDiff(a: number[], b: number[], timeoutMs: number): LineRun[] | null {
  const countA = new Map<number, number>();
  const countB = new Map<number, number>();
  const posB = new Map<number, number>();
  for (const x of a) countA.set(x, (countA.get(x) ?? 0) + 1);
  b.forEach((x, j) => {
    countB.set(x, (countB.get(x) ?? 0) + 1);
    posB.set(x, j);
  });
  const runs: LineRun[] = [];
  const push = (run: LineRun) => {
    if (run.count === 0) return;
    const last = runs[runs.length - 1];
    if (last && !!last.added === !!run.added && !!last.removed === !!run.removed) last.count += run.count;
    else runs.push({ ...run });
  };
  const deadline = Date.now() + timeoutMs;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      push({ count: 1 });
      i++;
      j++;
      continue;
    }
    // The next line unique on both sides whose place in b is still ahead: the gap before it is diffed alone.
    let ai = i;
    let bj = b.length;
    for (; ai < a.length; ai++) {
      const x = a[ai]!;
      if (countA.get(x) === 1 && countB.get(x) === 1 && posB.get(x)! >= j) {
        bj = posB.get(x)!;
        break;
      }
    }
    const gap = diffArrays(a.slice(i, ai), b.slice(j, bj), { timeout: Math.max(1, deadline - Date.now()) });
    if (!gap) return null;
    for (const c of gap)
      push({
        count: c.count ?? c.value.length,
        ...(c.added ? { added: true } : {}),
        ...(c.removed ? { removed: true } : {}),
      });
    i = ai;
    j = bj;
  }
  return runs;
}

/**
 * The base with only the kept hunks applied: every other line is the base's own, byte
 * for byte. Keeping every hunk gives `after` exactly; keeping none gives `before`.
 */
export function rebuildWithHunks(before: string, hunks: readonly Hunk[], kept: ReadonlySet<number>): string {
  const oldLines = rawLines(before);
  const out: string[] = [];
  let at = 0;
  for (const hunk of [...hunks].sort((a, b) => a.from - b.from)) {
    if (!kept.has(hunk.index)) continue;
    for (let i = at; i < hunk.from; i++) out.push(oldLines[i]!);
    out.push(...hunk.replacement);
    at = hunk.to;
  }
  for (let i = at; i < oldLines.length; i++) out.push(oldLines[i]!);
  return out.join("");
}

/** `@@ -a,b +c,d @@`, numbering an empty side from the line before it as unified diffs do. */
export function hunkLabel(hunk: Hunk): string {
  const oldStart = hunk.oldLines === 0 ? hunk.oldStart - 1 : hunk.oldStart;
  const newStart = hunk.newLines === 0 ? hunk.newStart - 1 : hunk.newStart;
  return `@@ -${oldStart},${hunk.oldLines} +${newStart},${hunk.newLines} @@`;
}

function stripEnding(line: string): string {
  if (line.endsWith("\r\n")) return line.slice(0, -2);
  if (line.endsWith("\n")) return line.slice(0, -1);
  return line;
}
