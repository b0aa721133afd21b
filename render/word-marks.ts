import { diffWordsWithSpace } from "diff";

/** Changed stretches of a line: [start, end) in UTF-16 units, in order, not overlapping. */
export type WordMarks = [number, number][];

/** Lines longer than this are not compared word by word: the whole line is marked as changed already. */
const MAX_LINE = 2000;
/** Below this share of unchanged text the two lines are different lines, and marking words would only add noise. */
const MIN_COMMON = 0.3;

/**
 * The words that differ between a removed line and the added line that replaced it
 * (`diffWordsWithSpace` of the diff package): marks for each side, or null when the
 * lines have too little in common (or are too long) for word marks to help.
 */
function wordMarks(removed: string, added: string): { removed: WordMarks; added: WordMarks } | null {
  if (removed.length > MAX_LINE || added.length > MAX_LINE || removed === added) return null;
  const parts = diffWordsWithSpace(removed, added, { timeout: 20 });
  if (!parts) return null;
  const out = { removed: [] as WordMarks, added: [] as WordMarks };
  let r = 0;
  let a = 0;
  let common = 0;
  for (const part of parts) {
    const n = part.value.length;
    if (part.removed) {
      out.removed.push([r, r + n]);
      r += n;
    } else if (part.added) {
      out.added.push([a, a + n]);
      a += n;
    } else {
      common += n;
      r += n;
      a += n;
    }
  }
  if (common < MIN_COMMON * Math.max(removed.length, added.length)) return null;
  return { removed: merge(out.removed), added: merge(out.added) };
}

/** Touching stretches joined, so `[-a-][-b-]` reads `[-ab-]`. */
function merge(marks: WordMarks): WordMarks {
  const out: WordMarks = [];
  for (const m of marks) {
    const last = out[out.length - 1];
    if (last && last[1] === m[0]) last[1] = m[1];
    else out.push([m[0], m[1]]);
  }
  return out;
}

/**
 * Word marks for the lines of one hunk (`-`/`+`/` ` signed lines): each run of removed
 * lines is paired, line by line, with the run of added lines right after it.
 * Returns the marks per line index; lines without marks are absent.
 */
export function hunkWordMarks(lines: readonly string[]): Map<number, WordMarks> {
  const marks = new Map<number, WordMarks>();
  let i = 0;
  while (i < lines.length) {
    if (lines[i]![0] !== "-") {
      i++;
      continue;
    }
    const removed: number[] = [];
    while (i < lines.length && (lines[i]![0] === "-" || lines[i]![0] === "\\")) {
      if (lines[i]![0] === "-") removed.push(i);
      i++;
    }
    const added: number[] = [];
    while (i < lines.length && (lines[i]![0] === "+" || lines[i]![0] === "\\")) {
      if (lines[i]![0] === "+") added.push(i);
      i++;
    }
    for (let k = 0; k < Math.min(removed.length, added.length); k++) {
      const pair = wordMarks(lines[removed[k]!]!.slice(1), lines[added[k]!]!.slice(1));
      if (!pair) continue;
      if (pair.removed.length > 0) marks.set(removed[k]!, pair.removed);
      if (pair.added.length > 0) marks.set(added[k]!, pair.added);
    }
  }
  return marks;
}
