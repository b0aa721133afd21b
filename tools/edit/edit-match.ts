// Where an edit's old_string lands in a file, tolerating the ways small models
// miscopy text, and never guessing: a tolerant form is applied only when it has
// exactly one candidate in the file. Nothing here builds a regular expression
// from model input (a 20 MB old_string once made one too large to compile).

import { notFoundMessage } from "./edit-diagnosis.ts";
import { FileLines, indexesOf, leadOf, lineAt, linesList, linesOf, trimmedMatches } from "./edit-lines.ts";
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
  | {
      kind: "applied";
      text: string;
      count: number /** 1-based first line of the (first) change. */;
      line: number /** How the match was tolerant, or null for an exact match. */;
      tolerance: string | null;
    }
  | { kind: "failed"; message: string };

interface Variant {
  oldString: string;
  newString: string;
  note: string | null;
}

/** Plans one edit: exact, then line-number prefixes removed, then escapes read, each exactly then whitespace-tolerantly. */
export function planEdit(req: EditRequest): EditPlan {
  const variants = variantsOf(req);
  const file = new FileLines(req.text);
  for (const v of variants) {
    const exact = exactPlan(req, v);
    if (exact) return exact;
    const tolerant = tolerantPlan(req, v, file);
    if (tolerant) return tolerant;
  }
  return { kind: "failed", message: notFoundMessage(req.display, file, variants[variants.length - 1]!) };
}

function variantsOf(req: EditRequest): Variant[] {
  const newString = stripNewOnly(req.oldString, req.newString);
  const out: Variant[] = [
    {
      oldString: req.oldString,
      newString,
      note: newString === req.newString ? null : "read_file's line-number prefixes removed from new_string",
    },
  ];
  const stripped = stripLinePrefixes(req.oldString, req.newString);
  if (stripped) out.push({ ...stripped, note: "line-number prefixes removed" });
  for (const base of [...out]) {
    const unescaped = unescapeVariant(base.oldString, base.newString);
    if (unescaped)
      out.push({
        ...unescaped,
        note: [base.note, "escaped quotes or \\n read as the characters they stand for"].filter(Boolean).join("; "),
      });
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
    return {
      kind: "failed",
      message: `old_string occurs ${all.length} times in ${req.display} (${linesList(all.map((p) => lineAt(text, p)))}). Add surrounding lines to make it unique, or set replace_all to true to change all ${all.length}.`,
    };
  }
  const next =
    positions.length === 1
      ? text.slice(0, positions[0]!) + v.newString + text.slice(positions[0]! + v.oldString.length)
      : text.split(v.oldString).join(v.newString);
  return { kind: "applied", text: next, count: positions.length, line: lineAt(text, positions[0]!), tolerance: v.note };
}

/** Whole-line matching that ignores whitespace at line starts and ends (indentation, tabs, trailing blanks, CR). One candidate only. */
function tolerantPlan(req: EditRequest, v: Variant, file: FileLines): EditPlan | null {
  const fileLines = file.lines;
  const oldLines = linesOf(v.oldString);
  if (oldLines.every((l) => l.trim() === "")) return null;
  const starts = trimmedMatches(file, oldLines);
  if (starts.length === 0) return null;
  if (starts.length > 1) {
    return {
      kind: "failed",
      message: `old_string was not found exactly in ${req.display}; ignoring indentation it matches ${starts.length} places (${linesList(starts.map((s) => s + 1))}). Add surrounding lines to make it unique, copying the exact text from read_file.`,
    };
  }
  const start = starts[0]!;
  const region = fileLines.slice(start, start + oldLines.length);
  const newLines = v.newString === "" ? [] : linesOf(v.newString);
  const replaced = reindent(newLines, oldLines, region);
  const next = [...fileLines.slice(0, start), ...replaced, ...fileLines.slice(start + oldLines.length)].join("\n");
  const trailingOnly = oldLines.every((l, k) => l.trimEnd() === region[k]!.trimEnd());
  const how = trailingOnly
    ? "trailing whitespace or line endings differed"
    : "indentation differed (new_string was re-indented to the file's)";
  const tolerance = [v.note, `tolerant match at line ${start + 1}: ${how}`].filter(Boolean).join("; ");
  return { kind: "applied", text: next, count: 1, line: start + 1, tolerance };
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

/** Escapes a model double-encoded (`\"`, a literal `\n`), read as the characters they stand for, when new_string is escaped the same way. */
function unescapeVariant(oldString: string, newString: string): { oldString: string; newString: string } | null {
  if (!/\\["'nt\\]/.test(oldString)) return null;
  const readEscapes = (s: string) =>
    s.replace(/\\(["'nt\\])/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));
  // new_string with bare quotes or real line breaks where old_string escaped them is not escaped: reading it so would corrupt it.
  const escapedQuotes = /\\"/.test(oldString);
  const escapedBreaks = /\\n/.test(oldString) && !oldString.includes("\n");
  if (escapedQuotes && /(^|[^\\])"/.test(newString)) return null;
  if (escapedBreaks && newString.includes("\n")) return null;
  return { oldString: readEscapes(oldString), newString: readEscapes(newString) };
}
