// The "did you mean" of an edit whose old_string is not in the file: new_string
// already there, or the closest region with line numbers and, line by line, how
// it differs. Bounded so a 10,000-line file answers in milliseconds.

import { diffArrays } from "diff";
import { cut, leadOf, lineAt, linesOf, trimmedMatches, type FileLines } from "./edit-lines.ts";

// Past these sizes the fuzzy search is skipped (exact and tolerant matching still ran), so one call stays fast.
const FUZZY_MAX_OLD_LINES = 400;
const FUZZY_MAX_FILE_LINES = 50_000;
const SHOWN_REGION_LINES = 30;

/** The "not found" answer: already applied, or the closest region with line numbers and how it differs. */
export function notFoundMessage(display: string, file: FileLines, v: { oldString: string; newString: string }): string {
  const head = `old_string was not found in ${display}.`;
  const applied = alreadyApplied(file, v);
  if (applied) return `${head} ${applied}`;
  const fileLines = file.lines;
  const oldLines = trimBlankEdges(linesOf(v.oldString));
  if (oldLines.length === 0) return `${head} It is only whitespace; include the text of a nearby line.`;
  if (oldLines.length > FUZZY_MAX_OLD_LINES || fileLines.length > FUZZY_MAX_FILE_LINES) {
    return `${head} Read the part of the file you want to change with read_file and copy a few exact lines into old_string.`;
  }
  const best = closestRegion(file, oldLines);
  if (best === null)
    return `${head} Nothing in its ${fileLines.length} lines resembles it. Search for a distinctive word of it with search, then read_file there and copy old_string exactly.`;
  const end = Math.min(fileLines.length, best + Math.max(oldLines.length, 1) + (oldLines.length > 1 ? 1 : 0));
  const region = fileLines.slice(best, Math.min(end, best + SHOWN_REGION_LINES));
  const shown = region.map((l, k) => `${String(best + k + 1).padStart(6)}\t${cut(l)}`);
  const differences = describeDifferences(oldLines, region, best);
  return [
    `${head} The closest text is at line${region.length > 1 ? `s ${best + 1}-${best + region.length}` : ` ${best + 1}`}:`,
    ...shown,
    ...(differences.length > 0 ? ["How old_string differs:", ...differences.map((d) => `- ${d}`)] : []),
    "Copy the exact text of these lines (without the number prefix) into old_string and retry.",
  ].join("\n");
}

function alreadyApplied(file: FileLines, v: { newString: string }): string | null {
  const neu = v.newString;
  if (neu.trim().length < 3) return null;
  const at = file.text.indexOf(neu);
  let line = at === -1 ? -1 : lineAt(file.text, at);
  if (line === -1) {
    const newLines = linesOf(neu);
    if (newLines.every((l) => l.trim() === "")) return null;
    const starts = trimmedMatches(file, newLines);
    if (starts.length === 0) return null;
    line = starts[0]! + 1;
  }
  const text = file.lines[line - 1] ?? "";
  return `new_string is already there, at line ${line}: ${JSON.stringify(cut(text.trim()))}. The edit looks applied already (by you earlier, or by someone else); read_file to check before changing anything.`;
}

/**
 * 0-based start of the file window most similar to `oldLines` (token overlap, a
 * line missing or extra allowed), or null when nothing is close. Windows are
 * first found cheaply (old lines found verbatim, then a few distinctive words
 * looked up), and only those candidates are scored, so a 10,000-line file stays fast.
 */
function closestRegion(file: FileLines, oldLines: string[]): number | null {
  const { text, lines: fileLines, trimmed } = file;
  // At most 30 sampled lines of old_string are used, so a long old_string stays cheap.
  const step = Math.max(1, Math.ceil(oldLines.length / 30));
  const sampled: number[] = [];
  for (let k = 0; k < oldLines.length; k += step) sampled.push(k);
  const votes = new Map<number, number>();
  const vote = (start: number, weight: number) => {
    const s = Math.max(0, Math.min(start, fileLines.length - 1));
    votes.set(s, (votes.get(s) ?? 0) + weight);
  };
  const byLine = new Map<string, number[]>();
  for (let i = 0; i < trimmed.length; i++) {
    const t = trimmed[i]!;
    if (t.length < 3) continue;
    const list = byLine.get(t);
    if (list) list.push(i);
    else byLine.set(t, [i]);
  }
  const unanchored: number[] = [];
  for (const k of sampled) {
    const hits = byLine.get(oldLines[k]!.trim());
    if (hits && hits.length <= MAX_ANCHOR_HITS) for (const h of hits) vote(h - k, 1);
    else unanchored.push(k);
  }
  if (unanchored.length > 0) {
    const words = new Map<string, number[]>();
    for (const k of unanchored)
      for (const t of tokensOf(oldLines[k]!))
        if (t.length >= 3 && /\w/.test(t)) words.set(t, [...(words.get(t) ?? []), k]);
    const chosen = [...words.keys()].sort((a, b) => b.length - a.length).slice(0, MAX_WORD_LOOKUPS);
    const starts = lineStarts(text);
    const lookUp = (haystack: string, fold: (w: string) => string, list: string[]) => {
      for (const word of list) {
        const needle = fold(word);
        const found: number[] = [];
        for (
          let at = haystack.indexOf(needle);
          at !== -1 && found.length <= MAX_WORD_HITS;
          at = haystack.indexOf(needle, at + needle.length)
        )
          found.push(lineOf(starts, at));
        if (found.length > MAX_WORD_HITS) continue;
        for (const line of new Set(found)) for (const k of words.get(word)!) vote(line - k, 0.5);
      }
    };
    lookUp(text, (w) => w, chosen);
    // Nothing found as written: the capitalisation may be what differs (the longest words only: a second pass costs a copy of the file).
    if (votes.size === 0) lookUp(text.toLowerCase(), (w) => w.toLowerCase(), chosen.slice(0, 4));
  }
  if (votes.size === 0) return null;
  const candidates = [...votes.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, MAX_CANDIDATES)
    .map(([start]) => start);
  const oldTokens = new Map<number, Set<string>>();
  const fileTokens = new Map<number, Set<string>>();
  const tokensAt = (cache: Map<number, Set<string>>, lines: string[], i: number) => {
    let t = cache.get(i);
    if (!t) cache.set(i, (t = tokenSet(lines[i] ?? "")));
    return t;
  };
  let best = -1;
  let bestScore = 0;
  for (const candidate of candidates) {
    for (const i of [candidate - 1, candidate, candidate + 1]) {
      if (i < 0 || i >= fileLines.length) continue;
      let score = 0;
      for (const k of sampled) {
        const o = tokensAt(oldTokens, oldLines, k);
        let s = similarity(o, tokensAt(fileTokens, fileLines, i + k));
        if (s < 1 && k > 0) s = Math.max(s, similarity(o, tokensAt(fileTokens, fileLines, i + k - 1)) * 0.9);
        if (s < 1 && i + k + 1 < fileLines.length)
          s = Math.max(s, similarity(o, tokensAt(fileTokens, fileLines, i + k + 1)) * 0.9);
        score += s;
      }
      score /= sampled.length;
      if (score > bestScore || (score === bestScore && i < best)) {
        bestScore = score;
        best = i;
      }
    }
  }
  return best >= 0 && bestScore >= 0.34 ? best : null;
}

// Bounds of the candidate search: a line found verbatim more often than this is no anchor; a word on more lines is too common to look up.
const MAX_ANCHOR_HITS = 50;
const MAX_WORD_LOOKUPS = 8;
const MAX_WORD_HITS = 200;
const MAX_CANDIDATES = 12;

function lineStarts(text: string): number[] {
  const out = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) out.push(i + 1);
  return out;
}

/** 0-based line of a character offset, by binary search over line starts. */
function lineOf(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** A line's tokens, plus identifiers' sub-words (TAX_RATE → TAX, RATE) and numbers without trailing zeros, so near spellings overlap. */
function tokenSet(line: string): Set<string> {
  const out = new Set<string>();
  for (const t of tokensOf(line)) {
    out.add(t);
    if (/^[A-Za-z_$]/.test(t)) {
      for (const part of t.split(/_|(?<=[a-z])(?=[A-Z])/)) if (part && part !== t) out.add(part.toLowerCase());
    } else if (/^\d+\.\d+$/.test(t)) out.add(t.replace(/\.?0+$/, ""));
  }
  return out;
}

function tokensOf(line: string): string[] {
  return line.match(/[A-Za-z_$][\w$]*|\d+(?:\.\d+)?|[^\s\w]/g) ?? [];
}

function similarity(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  if (a.size === 0 || b.size === 0) return 0;
  let common = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const t of small) if (large.has(t)) common++;
  const dice = (2 * common) / (a.size + b.size);
  // old_string may be a fragment of a longer line: how much of it the line contains counts too.
  return a.size >= 3 ? Math.max(dice, (0.85 * common) / a.size) : dice;
}

/** Line-by-line, what separates old_string from the region shown (at most 5 points). */
function describeDifferences(oldLines: string[], region: string[], start: number): string[] {
  const out: string[] = [];
  const changes = diffArrays(
    oldLines.map((l) => l.trim()),
    region.map((l) => l.trim()),
  );
  let fileIndex = 0;
  let oldIndex = 0;
  for (let c = 0; c < changes.length && out.length < 5; c++) {
    const change = changes[c]!;
    const count = change.value.length;
    if (!change.added && !change.removed) {
      // Trimmed-equal lines that still differ differ in indentation (shown once).
      for (let j = 0; j < count && out.length < 5; j++) {
        if (oldLines[oldIndex + j] !== region[fileIndex + j]) {
          out.push(
            `line ${start + fileIndex + j + 1}: indentation differs (the file has ${describeLead(leadOf(region[fileIndex + j]!))}, old_string ${describeLead(leadOf(oldLines[oldIndex + j]!))})`,
          );
          break;
        }
      }
      oldIndex += count;
      fileIndex += count;
      continue;
    }
    const nextChange = changes[c + 1];
    if (change.removed && nextChange?.added) {
      const pairs = Math.min(count, nextChange.value.length);
      for (let j = 0; j < pairs && out.length < 5; j++)
        out.push(
          `line ${start + fileIndex + j + 1}: ${lineDifference(oldLines[oldIndex + j]!, region[fileIndex + j]!)}`,
        );
      for (let j = pairs; j < count && out.length < 5; j++)
        out.push(`old_string has a line the file lacks here: ${JSON.stringify(cut(oldLines[oldIndex + j]!.trim()))}`);
      for (let j = pairs; j < nextChange.value.length && out.length < 5; j++)
        out.push(
          `line ${start + fileIndex + j + 1} is in the file but missing from old_string: ${JSON.stringify(cut(region[fileIndex + j]!.trim()))}`,
        );
      oldIndex += count;
      fileIndex += nextChange.value.length;
      c++;
    } else if (change.removed) {
      for (let j = 0; j < count && out.length < 5; j++)
        out.push(`old_string has a line the file lacks here: ${JSON.stringify(cut(oldLines[oldIndex + j]!.trim()))}`);
      oldIndex += count;
    } else {
      // Lines after the last old line are context shown, not differences.
      if (oldIndex < oldLines.length) {
        for (let j = 0; j < count && out.length < 5; j++)
          out.push(
            `line ${start + fileIndex + j + 1} is in the file but missing from old_string: ${JSON.stringify(cut(region[fileIndex + j]!.trim()))}`,
          );
      }
      fileIndex += count;
    }
  }
  return out;
}

/** How one old_string line differs from the file's line, in the terms a model can act on. */
function lineDifference(oldLine: string, fileLine: string): string {
  const o = oldLine.trim();
  const f = fileLine.trim();
  const pair = `(old_string ${JSON.stringify(cut(o))}, the file ${JSON.stringify(cut(f))})`;
  const within = (needle: string[], hay: string[]) =>
    needle.length > 0 && hay.some((_, i) => needle.every((t, k) => hay[i + k] === t));
  if (within(tokensOf(o), tokensOf(f))) return `spacing differs ${pair}`;
  const lower = (ts: string[]) => ts.map((t) => t.toLowerCase());
  if (within(lower(tokensOf(o)), lower(tokensOf(f)))) return `capitalisation differs ${pair}`;
  const quotes = (s: string) => tokensOf(s.replace(/\\/g, "").replace(/["'`]/g, '"'));
  if (within(quotes(o), quotes(f))) return `quotes or escapes differ ${pair}`;
  const tokens = tokensOf;
  const changes = diffArrays(tokens(o), tokens(f));
  const points: string[] = [];
  for (let c = 0; c < changes.length; c++) {
    const change = changes[c]!;
    // Tokens the file has before or after all of old_string's: old_string is a fragment of the line, which is fine.
    const edge = c === 0 || c === changes.length - 1;
    const next = changes[c + 1];
    if (change.removed && next?.added) {
      const a = change.value.join(" ");
      // At the line's edges old_string may be a fragment: only as many file tokens as old_string has are compared.
      const atEnd = c + 1 === changes.length - 1;
      const n = change.value.length;
      const b = (atEnd ? next.value.slice(0, n) : c === 0 ? next.value.slice(-n) : next.value).join(" ");
      const numbers = /^[\d.]+$/.test(a) && /^[\d.]+$/.test(b);
      points.push(
        `${numbers ? "a value differs" : "a word differs"}: ${JSON.stringify(a)} in old_string, ${JSON.stringify(b)} in the file`,
      );
      c++;
    } else if (change.removed)
      points.push(`old_string has ${JSON.stringify(change.value.join(" "))}, the file does not`);
    else if (change.added && !edge)
      points.push(`the file has ${JSON.stringify(change.value.join(" "))} where old_string has nothing`);
  }
  if (points.length === 0) return `spacing differs ${pair}`;
  return `${points.slice(0, 3).join("; ")} ${pair}`;
}

function describeLead(lead: string): string {
  if (lead === "") return "no indentation";
  const tabs = lead.length - lead.replaceAll("\t", "").length;
  const spaces = lead.length - tabs;
  return [tabs ? `${tabs} tab${tabs > 1 ? "s" : ""}` : "", spaces ? `${spaces} space${spaces > 1 ? "s" : ""}` : ""]
    .filter(Boolean)
    .join(" + ");
}

function trimBlankEdges(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && lines[a]!.trim() === "") a++;
  while (b > a && lines[b - 1]!.trim() === "") b--;
  return lines.slice(a, b);
}
