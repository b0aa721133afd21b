import { diffLines } from "diff";

/** Lines added and removed between two texts, and the added lines themselves. */
export interface LineDelta {
  added: number;
  removed: number;
  addedLines: string[];
  /** False when the diff gave up (too slow) and the counts are the whole before/after. */
  exact: boolean;
}

/** Bounded: a pathological pair falls back to "everything removed, everything added" after `timeoutMs`. */
export function lineDelta(before: string, after: string, timeoutMs = 500): LineDelta {
  if (before === after) return { added: 0, removed: 0, addedLines: [], exact: true };
  const changes = diffLines(before, after, { timeout: timeoutMs });
  if (!changes) {
    const addedLines = splitLines(after);
    return { added: addedLines.length, removed: splitLines(before).length, addedLines, exact: false };
  }
  let added = 0;
  let removed = 0;
  const addedLines: string[] = [];
  for (const c of changes) {
    if (c.added) {
      added += c.count ?? 0;
      addedLines.push(...splitLines(c.value));
    } else if (c.removed) removed += c.count ?? 0;
  }
  return { added, removed, addedLines, exact: true };
}

/** The lines of a text; a trailing newline does not make an extra empty line. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}
