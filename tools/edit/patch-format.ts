import { PatchError } from "../../core/errors/patch-error.ts";
// The `*** Begin Patch` format gpt-oss and Codex models are trained on: files
// added, deleted, moved, or updated by hunks of context (' '), removed ('-') and
// added ('+') lines, each found in the file from where the previous one ended.
// Parsing and applying are pure functions on text; the apply_patch tool stages.

/** One operation of a patch, in the order written. */
export type PatchOp =
  | { kind: "add"; path: string; content: string }
  | { kind: "delete"; path: string }
  | { kind: "update"; path: string; moveTo: string | null; hunks: PatchHunk[] };

/** One hunk of an update: `context` is the text after `@@` (a line to find first), `old` and `new` its lines. */
export interface PatchHunk {
  context: string;
  old: string[];
  new: string[];
  /** True when the hunk is marked `*** End of File`: it must match at the file's end. */
  atEnd: boolean;
  /** 1-based line of the hunk's `@@` in the patch, for messages. */
  patchLine: number;
}

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";

/** True when `text` is a patch in this format (it begins with `*** Begin Patch`, after blanks or a fence). */
export function isApplyPatchText(text: string): boolean {
  return /^\s*(?:```[\w-]*\s*\n)?\s*\*\*\* Begin Patch\s*$/m.test(text.slice(0, 200)) && text.includes("*** ");
}

/** The operations of a patch; throws PatchError naming the line that cannot be read. */
export function parseApplyPatch(text: string): PatchOp[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length && (lines[i]!.trim() === "" || lines[i]!.trim().startsWith("```"))) i++;
  if (lines[i]?.trim() !== BEGIN)
    throw new PatchError(
      `the patch must begin with "${BEGIN}" on its own line (line ${i + 1} is ${JSON.stringify(lines[i] ?? "")}).`,
    );
  i++;
  const ops: PatchOp[] = [];
  for (;;) {
    const line = lines[i];
    // A missing "*** End Patch" at the very end is forgiven: the operations are complete.
    if (line === undefined || line.trim() === END) break;
    if (line.trim() === "" || line.trim().startsWith("```")) {
      i++;
      continue;
    }
    const header = /^\*\*\* (Add|Delete|Update) File: (.+)$/.exec(line.trim());
    if (!header)
      throw new PatchError(
        `line ${i + 1} (${JSON.stringify(line.slice(0, 120))}) is not an operation: expected "*** Add File: <path>", "*** Update File: <path>", "*** Delete File: <path>" or "${END}".`,
      );
    const path = header[2]!.trim();
    i++;
    if (header[1] === "Delete") {
      ops.push({ kind: "delete", path });
      continue;
    }
    if (header[1] === "Add") {
      const body: string[] = [];
      while (i < lines.length && !lines[i]!.startsWith("*** ")) {
        const l = lines[i]!;
        if (!l.startsWith("+") && l !== "")
          throw new PatchError(
            `line ${i + 1} of the added file ${path} must start with "+" (every line of a new file does).`,
          );
        body.push(l.slice(1));
        i++;
      }
      while (body.length > 0 && body[body.length - 1] === "" && lines[i - 1] === "") body.pop();
      ops.push({ kind: "add", path, content: body.length ? `${body.join("\n")}\n` : "" });
      continue;
    }
    let moveTo: string | null = null;
    const move = /^\*\*\* Move to: (.+)$/.exec(lines[i]?.trim() ?? "");
    if (move) {
      moveTo = move[1]!.trim();
      i++;
    }
    const hunks: PatchHunk[] = [];
    let hunk: PatchHunk | null = null;
    const start = (context: string, patchLine: number) => {
      hunk = { context, old: [], new: [], atEnd: false, patchLine };
      hunks.push(hunk);
    };
    while (i < lines.length) {
      const l = lines[i]!;
      if (l.trim() === "*** End of File") {
        if (hunk) (hunk as PatchHunk).atEnd = true;
        i++;
        continue;
      }
      if (l.startsWith("*** ")) break;
      if (l.startsWith("@@")) {
        start(l.replace(/^@@\s?/, "").replace(/\s*@@.*$/, ""), i + 1);
        i++;
        continue;
      }
      if (!hunk) start("", i + 1);
      const h = hunk as unknown as PatchHunk;
      const mark = l[0];
      if (mark === "+") h.new.push(l.slice(1));
      else if (mark === "-") h.old.push(l.slice(1));
      else if (mark === " " || l === "") {
        h.old.push(l.slice(1));
        h.new.push(l.slice(1));
      } else
        throw new PatchError(
          `line ${i + 1} of the update of ${path} (${JSON.stringify(l.slice(0, 120))}) must start with " " (context), "-" (removed) or "+" (added).`,
        );
      i++;
    }
    // Blank lines at a hunk's end are usually the patch's own spacing, not context.
    for (const h of hunks)
      while (h.old.length > 0 && h.old.at(-1) === "" && h.new.at(-1) === "") {
        h.old.pop();
        h.new.pop();
      }
    if (hunks.length === 0 && moveTo === null)
      throw new PatchError(
        `the update of ${path} has no hunks: add lines starting with " ", "-" or "+" after its header.`,
      );
    ops.push({ kind: "update", path, moveTo, hunks });
  }
  if (ops.length === 0) throw new PatchError(`the patch has no operations between "${BEGIN}" and "${END}".`);
  return ops;
}

/**
 * The file's text with the hunks applied in order. Each hunk's lines are looked
 * for from where the previous hunk ended: exactly, then ignoring trailing
 * whitespace, then ignoring indentation (the matched lines keep the file's).
 * Throws PatchError quoting the hunk that does not apply and the closest lines.
 */
export function applyHunks(text: string, hunks: PatchHunk[], display: string): string {
  const endsWithNewline = text.endsWith("\n");
  const lines = text === "" ? [] : (endsWithNewline ? text.slice(0, -1) : text).split("\n");
  const match = new MatchLines(lines);
  let cursor = 0;
  // Replacements are gathered and made at the end, so positions stay those of the original file.
  const edits: { at: number; remove: number; insert: string[] }[] = [];
  hunks.forEach((h, n) => {
    if (h.context) {
      const found = seekLine(lines, h.context, cursor);
      if (found === -1)
        throw new PatchError(
          `hunk ${n + 1} of ${hunks.length} for ${display} (patch line ${h.patchLine}) does not apply: its @@ line ${JSON.stringify(h.context)} is not in the file after line ${cursor}.${closest(lines, [h.context])} Nothing was staged; read_file and send the patch again with lines copied exactly.`,
        );
      cursor = found + 1;
    }
    if (h.old.length === 0) {
      const at = h.atEnd || !h.context ? lines.length : cursor;
      edits.push({ at, remove: 0, insert: h.new });
      cursor = at;
      return;
    }
    let at = seek(match, h.old, cursor, h.atEnd);
    if (at === -1 && h.old.length > 1 && h.old.at(-1)!.trim() === "")
      at = seek(match, h.old.slice(0, -1), cursor, h.atEnd);
    if (at === -1)
      throw new PatchError(
        [
          `hunk ${n + 1} of ${hunks.length} for ${display} (patch line ${h.patchLine}) does not apply: these lines are not in the file${cursor > 0 ? ` after line ${cursor}` : ""}:`,
          ...h.old.slice(0, 8).map((l) => `  ${l}`),
          ...(h.old.length > 8 ? [`  … ${h.old.length - 8} more`] : []),
          `${closest(lines, h.old)} Nothing was staged; read_file and send the patch again with the context and "-" lines copied exactly.`,
        ].join("\n"),
      );
    const matched = lines.slice(at, at + h.old.length);
    edits.push({ at, remove: h.old.length, insert: keepIndentation(h, matched) });
    cursor = at + h.old.length;
  });
  const out: string[] = [];
  let pos = 0;
  for (const e of edits.sort((a, b) => a.at - b.at)) {
    for (; pos < e.at; pos++) out.push(lines[pos]!);
    out.push(...e.insert);
    pos = Math.max(pos, e.at + e.remove);
  }
  for (; pos < lines.length; pos++) out.push(lines[pos]!);
  return out.length === 0 ? "" : `${out.join("\n")}${endsWithNewline || text === "" ? "\n" : ""}`;
}

/** A file's lines in the three forms hunks are matched in, the trimmed ones made once, on first need. */
class MatchLines {
  private forms: (string[] | null)[];
  constructor(readonly lines: string[]) {
    this.forms = [lines, null, null];
  }
  form(k: number): string[] {
    this.forms[k] ??= this.lines.map(k === 1 ? (l) => l.trimEnd() : (l) => l.trim());
    return this.forms[k]!;
  }
}

/** First index ≥ from of a line equal to `want`, or equal once both are trimmed (only lines containing it are trimmed: no copy of the file). */
function seekLine(lines: string[], want: string, from: number): number {
  for (let i = from; i < lines.length; i++) if (lines[i] === want) return i;
  const core = want.trim();
  if (core === "") return -1;
  for (let i = from; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.includes(core) && l.trim() === core) return i;
  }
  return -1;
}

const FORMS = [(s: string) => s, (s: string) => s.trimEnd(), (s: string) => s.trim()];

/** First index ≥ from where `want` matches, exact, then trailing-space-blind, then indentation-blind; -1 when none. */
function seek(file: MatchLines, want: string[], from: number, atEnd: boolean): number {
  for (let f = 0; f < FORMS.length; f++) {
    const w = want.map(FORMS[f]!);
    const have = file.form(f);
    const last = have.length - w.length;
    const first = atEnd ? last : from;
    const head = w[0]!;
    for (let i = Math.max(0, first); i <= last; i++) {
      if (have[i] !== head) continue;
      let k = 1;
      while (k < w.length && have[i + k] === w[k]) k++;
      if (k === w.length) return i;
    }
  }
  return -1;
}

/** The hunk's new lines; a context line matched with other whitespace is kept as the file has it. */
function keepIndentation(h: PatchHunk, matched: string[]): string[] {
  const out: string[] = [];
  let oi = 0;
  for (const line of h.new) {
    // Context lines appear in both old and new, in the same order.
    const idx = h.old.indexOf(line, oi);
    if (idx !== -1 && idx - oi < 50) {
      out.push(matched[idx]!);
      oi = idx + 1;
    } else out.push(line);
  }
  return out;
}

/** " The closest text is at line N: …" for a hunk that did not apply, or "" when nothing resembles it. */
function closest(lines: string[], want: string[]): string {
  const probe = want.map((l) => l.trim()).find((l) => l.length >= 4);
  if (!probe) return "";
  const words = probe.split(/\W+/).filter((w) => w.length >= 3);
  let best = -1;
  let score = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    let s = 0;
    for (const w of words) if (l.includes(w)) s++;
    if (s > score) {
      score = s;
      best = i;
    }
  }
  if (best === -1 || score < Math.max(1, Math.ceil(words.length / 2))) return "";
  const shown = lines.slice(best, best + Math.min(6, Math.max(2, want.length)));
  return ` The closest text is at line ${best + 1}:\n${shown.map((l, k) => `${String(best + k + 1).padStart(6)}\t${l}`).join("\n")}\n`;
}
