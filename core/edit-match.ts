// Where an edit's old_string lands in a file, tolerating the ways small models
// miscopy text, and never guessing: a tolerant form is applied only when it has
// exactly one candidate in the file. Nothing here builds a regular expression
// from model input (a 20 MB old_string once made one too large to compile).

import { diffArrays } from "diff";
import { stripLinePrefixes } from "./line-prefix.ts";

/** An edit request on a file's LF text view. */
export interface EditRequest {
  text: string;
  oldString: string;
  newString: string;
  replaceAll: boolean;
  /** The path as the model should read it, for messages. */
  display: string;
}

/** The planned result: the new text, or why nothing was changed (a message for the model). */
export type EditPlan =
  | { kind: "applied"; text: string; count: number; /** 1-based first line of the (first) change. */ line: number; /** How the match was tolerant, or null for an exact match. */ tolerance: string | null }
  | { kind: "failed"; message: string };

// Past these sizes the fuzzy "did you mean" is skipped (exact and tolerant matching still run), so one call stays fast.
const FUZZY_MAX_OLD_LINES = 400;
const FUZZY_MAX_FILE_LINES = 50_000;
const SHOWN_REGION_LINES = 30;
const SHOWN_CHARS = 300;

interface Variant {
  oldString: string;
  newString: string;
  note: string | null;
}

/** Plans one edit: exact, then line-number prefixes removed, then escapes read, each exactly then whitespace-tolerantly. */
export function planEdit(req: EditRequest): EditPlan {
  const variants = variantsOf(req);
  for (const v of variants) {
    const exact = exactPlan(req, v);
    if (exact) return exact;
    const tolerant = tolerantPlan(req, v);
    if (tolerant) return tolerant;
  }
  return { kind: "failed", message: notFound(req, variants[variants.length - 1]!) };
}

function variantsOf(req: EditRequest): Variant[] {
  const newString = stripNewOnly(req.oldString, req.newString);
  const out: Variant[] = [{ oldString: req.oldString, newString, note: newString === req.newString ? null : "read_file's line-number prefixes removed from new_string" }];
  const stripped = stripLinePrefixes(req.oldString, req.newString);
  if (stripped) out.push({ ...stripped, note: "line-number prefixes removed" });
  for (const base of [...out]) {
    const unescaped = unescapeVariant(base.oldString, base.newString);
    if (unescaped) out.push({ ...unescaped, note: [base.note, "escaped quotes or \\n read as the characters they stand for"].filter(Boolean).join("; ") });
  }
  return out;
}

/** new_string alone carrying read_file's exact prefix (`   12\t`) on its first line, while old_string does not: the prefix goes. */
function stripNewOnly(oldString: string, newString: string): string {
  if (READ_PREFIX.test(oldString)) return newString;
  const stripped = stripLinePrefixes(newString, newString, { readFormatOnly: true });
  return stripped ? stripped.newString : newString;
}
const READ_PREFIX = /^ *\d+\t/;

function exactPlan(req: EditRequest, v: Variant): EditPlan | null {
  const { text } = req;
  const positions = indexesOf(text, v.oldString, req.replaceAll ? Infinity : 2);
  if (positions.length === 0) return null;
  if (positions.length > 1 && !req.replaceAll) {
    const all = indexesOf(text, v.oldString, Infinity);
    return { kind: "failed", message: `old_string occurs ${all.length} times in ${req.display} (${linesList(all.map((p) => lineAt(text, p)))}). Add surrounding lines to make it unique, or set replace_all to true to change all ${all.length}.` };
  }
  const next = positions.length === 1 ? text.slice(0, positions[0]!) + v.newString + text.slice(positions[0]! + v.oldString.length) : text.split(v.oldString).join(v.newString);
  return { kind: "applied", text: next, count: positions.length, line: lineAt(text, positions[0]!), tolerance: v.note };
}

/** Whole-line matching that ignores whitespace at line starts and ends (indentation, tabs, trailing blanks, CR). One candidate only. */
function tolerantPlan(req: EditRequest, v: Variant): EditPlan | null {
  const fileLines = req.text.split("\n");
  const oldLines = linesOf(v.oldString);
  if (oldLines.every((l) => l.trim() === "")) return null;
  const starts = lineMatches(fileLines, oldLines, (l) => l.trim());
  if (starts.length === 0) return null;
  if (starts.length > 1) {
    return { kind: "failed", message: `old_string was not found exactly in ${req.display}; ignoring indentation it matches ${starts.length} places (${linesList(starts.map((s) => s + 1))}). Add surrounding lines to make it unique, copying the exact text from read_file.` };
  }
  const start = starts[0]!;
  const region = fileLines.slice(start, start + oldLines.length);
  const newLines = v.newString === "" ? [] : linesOf(v.newString);
  const replaced = reindent(newLines, oldLines, region);
  const next = [...fileLines.slice(0, start), ...replaced, ...fileLines.slice(start + oldLines.length)].join("\n");
  const trailingOnly = oldLines.every((l, k) => l.trimEnd() === region[k]!.trimEnd());
  const how = trailingOnly ? "trailing whitespace or line endings differed" : "indentation differed (new_string was re-indented to the file's)";
  const tolerance = [v.note, `tolerant match at line ${start + 1}: ${how}`].filter(Boolean).join("; ");
  return { kind: "applied", text: next, count: 1, line: start + 1, tolerance };
}

/** The 0-based starts of every run of file lines equal to `oldLines` under `norm`. */
function lineMatches(fileLines: string[], oldLines: string[], norm: (l: string) => string): number[] {
  const want = oldLines.map(norm);
  const out: number[] = [];
  const last = fileLines.length - want.length;
  for (let i = 0; i <= last; i++) {
    let k = 0;
    while (k < want.length && norm(fileLines[i + k]!) === want[k]) k++;
    if (k === want.length) out.push(i);
  }
  return out;
}

/**
 * new_string's lines indented the way the matched file lines are: a line copied
 * unchanged from old_string takes the file's line verbatim; others get the
 * file's indentation for the same old indentation, or the shifted base.
 */
function reindent(newLines: string[], oldLines: string[], region: string[]): string[] {
  const map = new Map<string, string>();
  let base: [string, string] | null = null;
  for (let k = 0; k < oldLines.length; k++) {
    if (oldLines[k]!.trim() === "") continue;
    const o = leadOf(oldLines[k]!);
    const f = leadOf(region[k]!);
    if (!map.has(o)) map.set(o, f);
    if (!base) base = [o, f];
  }
  const [oBase, fBase] = base ?? ["", ""];
  const fileTabs = [...map.values()].some((f) => f.includes("\t"));
  const oldTabs = [...map.keys()].some((o) => o.includes("\t"));
  const unit = indentUnit(map);
  const convert = (ws: string): string => {
    if (fileTabs && !oldTabs) return ws.replaceAll(" ".repeat(unit), "\t");
    if (!fileTabs && oldTabs) return ws.replaceAll("\t", " ".repeat(unit));
    return ws;
  };
  const out: string[] = [];
  let next = 0;
  for (const line of newLines) {
    const same = oldLines.indexOf(line, next);
    if (same !== -1 && same - next < 50) {
      out.push(region[same]!);
      next = same + 1;
      continue;
    }
    if (line.trim() === "") {
      out.push("");
      continue;
    }
    const lead = leadOf(line);
    const body = line.slice(lead.length);
    const mapped = map.get(lead);
    if (mapped !== undefined) out.push(mapped + body);
    else if (lead.startsWith(oBase)) out.push(fBase + convert(lead.slice(oBase.length)) + body);
    else out.push(convert(lead) + body);
  }
  return out;
}

/** Spaces per tab between the two indentation styles, from pairs seen in the match (4 when none tells). */
function indentUnit(map: Map<string, string>): number {
  for (const [o, f] of map) {
    const tabs = (s: string) => s.length - s.replaceAll("\t", "").length;
    if (tabs(f) > 0 && tabs(o) === 0 && o.length > 0) return Math.max(1, Math.round(o.length / tabs(f)));
    if (tabs(o) > 0 && tabs(f) === 0 && f.length > 0) return Math.max(1, Math.round(f.length / tabs(o)));
  }
  return 4;
}

function leadOf(line: string): string {
  let i = 0;
  while (i < line.length && (line[i] === " " || line[i] === "\t")) i++;
  return line.slice(0, i);
}

/** Escapes a model double-encoded (`\"`, a literal `\n`), read as the characters they stand for, when new_string is escaped the same way. */
function unescapeVariant(oldString: string, newString: string): { oldString: string; newString: string } | null {
  if (!/\\["'nt\\]/.test(oldString)) return null;
  const unescape = (s: string) => s.replace(/\\(["'nt\\])/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));
  // new_string with bare quotes or real line breaks where old_string escaped them is not escaped: reading it so would corrupt it.
  const escapedQuotes = /\\"/.test(oldString);
  const escapedBreaks = /\\n/.test(oldString) && !oldString.includes("\n");
  if (escapedQuotes && /(^|[^\\])"/.test(newString)) return null;
  if (escapedBreaks && newString.includes("\n")) return null;
  return { oldString: unescape(oldString), newString: unescape(newString) };
}

/** The "not found" answer: already applied, or the closest region with line numbers and how it differs. */
function notFound(req: EditRequest, v: Variant): string {
  const head = `old_string was not found in ${req.display}.`;
  const applied = alreadyApplied(req, v);
  if (applied) return `${head} ${applied}`;
  const fileLines = req.text.split("\n");
  const oldLines = trimBlankEdges(linesOf(v.oldString));
  if (oldLines.length === 0) return `${head} It is only whitespace; include the text of a nearby line.`;
  if (oldLines.length > FUZZY_MAX_OLD_LINES || fileLines.length > FUZZY_MAX_FILE_LINES) {
    return `${head} Read the part of the file you want to change with read_file and copy a few exact lines into old_string.`;
  }
  const best = closestRegion(req.text, fileLines, oldLines);
  if (best === null) return `${head} Nothing in its ${fileLines.length} lines resembles it. Search for a distinctive word of it with search, then read_file there and copy old_string exactly.`;
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

function alreadyApplied(req: EditRequest, v: Variant): string | null {
  const neu = v.newString;
  if (neu.trim().length < 3) return null;
  const at = req.text.indexOf(neu);
  let line = at === -1 ? -1 : lineAt(req.text, at);
  if (line === -1) {
    const newLines = linesOf(neu);
    if (newLines.every((l) => l.trim() === "")) return null;
    const starts = lineMatches(req.text.split("\n"), newLines, (l) => l.trim());
    if (starts.length === 0) return null;
    line = starts[0]! + 1;
  }
  const text = req.text.split("\n")[line - 1] ?? "";
  return `new_string is already there, at line ${line}: ${JSON.stringify(cut(text.trim()))}. The edit looks applied already (by you earlier, or by someone else); read_file to check before changing anything.`;
}

/**
 * 0-based start of the file window most similar to `oldLines` (token overlap, a
 * line missing or extra allowed), or null when nothing is close. Windows are
 * first found cheaply (old lines found verbatim, then a few distinctive words
 * looked up), and only those candidates are scored, so a 10,000-line file stays fast.
 */
function closestRegion(text: string, fileLines: string[], oldLines: string[]): number | null {
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
  for (let i = 0; i < fileLines.length; i++) {
    const t = fileLines[i]!.trim();
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
    for (const k of unanchored) for (const t of tokensOf(oldLines[k]!)) if (t.length >= 3 && /\w/.test(t)) words.set(t, [...(words.get(t) ?? []), k]);
    const chosen = [...words.keys()].sort((a, b) => b.length - a.length).slice(0, MAX_WORD_LOOKUPS);
    const starts = lineStarts(text);
    const lookUp = (haystack: string, fold: (w: string) => string) => {
      for (const word of chosen) {
        const needle = fold(word);
        const found: number[] = [];
        for (let at = haystack.indexOf(needle); at !== -1 && found.length <= MAX_WORD_HITS; at = haystack.indexOf(needle, at + needle.length)) found.push(lineOf(starts, at));
        if (found.length > MAX_WORD_HITS) continue;
        for (const line of new Set(found)) for (const k of words.get(word)!) vote(line - k, 0.5);
      }
    };
    lookUp(text, (w) => w);
    // Nothing found as written: the capitalisation may be what differs.
    if (votes.size === 0) lookUp(text.toLowerCase(), (w) => w.toLowerCase());
  }
  if (votes.size === 0) return null;
  const candidates = [...votes.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, MAX_CANDIDATES).map(([start]) => start);
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
        if (s < 1 && i + k + 1 < fileLines.length) s = Math.max(s, similarity(o, tokensAt(fileTokens, fileLines, i + k + 1)) * 0.9);
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
  const changes = diffArrays(oldLines.map((l) => l.trim()), region.map((l) => l.trim()));
  let fileIndex = 0;
  let oldIndex = 0;
  for (let c = 0; c < changes.length && out.length < 5; c++) {
    const change = changes[c]!;
    const count = change.value.length;
    if (!change.added && !change.removed) {
      // Trimmed-equal lines that still differ differ in indentation (shown once).
      for (let j = 0; j < count && out.length < 5; j++) {
        if (oldLines[oldIndex + j] !== region[fileIndex + j]) {
          out.push(`line ${start + fileIndex + j + 1}: indentation differs (the file has ${describeLead(leadOf(region[fileIndex + j]!))}, old_string ${describeLead(leadOf(oldLines[oldIndex + j]!))})`);
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
      for (let j = 0; j < pairs && out.length < 5; j++) out.push(`line ${start + fileIndex + j + 1}: ${lineDifference(oldLines[oldIndex + j]!, region[fileIndex + j]!)}`);
      for (let j = pairs; j < count && out.length < 5; j++) out.push(`old_string has a line the file lacks here: ${JSON.stringify(cut(oldLines[oldIndex + j]!.trim()))}`);
      for (let j = pairs; j < nextChange.value.length && out.length < 5; j++) out.push(`line ${start + fileIndex + j + 1} is in the file but missing from old_string: ${JSON.stringify(cut(region[fileIndex + j]!.trim()))}`);
      oldIndex += count;
      fileIndex += nextChange.value.length;
      c++;
    } else if (change.removed) {
      for (let j = 0; j < count && out.length < 5; j++) out.push(`old_string has a line the file lacks here: ${JSON.stringify(cut(oldLines[oldIndex + j]!.trim()))}`);
      oldIndex += count;
    } else {
      // Lines after the last old line are context shown, not differences.
      if (oldIndex < oldLines.length) {
        for (let j = 0; j < count && out.length < 5; j++) out.push(`line ${start + fileIndex + j + 1} is in the file but missing from old_string: ${JSON.stringify(cut(region[fileIndex + j]!.trim()))}`);
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
  const within = (needle: string[], hay: string[]) => needle.length > 0 && hay.some((_, i) => needle.every((t, k) => hay[i + k] === t));
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
      points.push(`${numbers ? "a value differs" : "a word differs"}: ${JSON.stringify(a)} in old_string, ${JSON.stringify(b)} in the file`);
      c++;
    } else if (change.removed) points.push(`old_string has ${JSON.stringify(change.value.join(" "))}, the file does not`);
    else if (change.added && !edge) points.push(`the file has ${JSON.stringify(change.value.join(" "))} where old_string has nothing`);
  }
  if (points.length === 0) return `spacing differs ${pair}`;
  return `${points.slice(0, 3).join("; ")} ${pair}`;
}

function describeLead(lead: string): string {
  if (lead === "") return "no indentation";
  const tabs = lead.length - lead.replaceAll("\t", "").length;
  const spaces = lead.length - tabs;
  return [tabs ? `${tabs} tab${tabs > 1 ? "s" : ""}` : "", spaces ? `${spaces} space${spaces > 1 ? "s" : ""}` : ""].filter(Boolean).join(" + ");
}

/** The lines of a string; a final line break does not make an extra empty line. */
function linesOf(s: string): string[] {
  const lines = s.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function trimBlankEdges(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && lines[a]!.trim() === "") a++;
  while (b > a && lines[b - 1]!.trim() === "") b--;
  return lines.slice(a, b);
}

function indexesOf(text: string, needle: string, max: number): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i !== -1 && out.length < max; i = text.indexOf(needle, i + needle.length)) out.push(i);
  return out;
}

/** 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

function linesList(lines: number[]): string {
  const shown = lines.slice(0, 10).join(", ");
  return `line${lines.length > 1 ? "s" : ""} ${shown}${lines.length > 10 ? `, … ${lines.length - 10} more` : ""}`;
}

function cut(s: string): string {
  return s.length <= SHOWN_CHARS ? s : `${s.slice(0, SHOWN_CHARS)}…`;
}
