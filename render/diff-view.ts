import { structuredPatch, type StructuredPatchHunk } from "diff";
import pc from "picocolors";
import type { FileChange } from "../core/staging/changeset.ts";
import { splitLines } from "../core/staging/line-diff.ts";
import { decodeText, revealText, unreadableBytes, type DecodedText } from "../core/text.ts";
import { escapeChar, UNSAFE, visible } from "./visible-text.ts";
import { hunkWordMarks, type WordMarks } from "./word-marks.ts";

/** How to render one file's diff. */
export interface DiffViewOptions {
  /** ANSI colours; when false the text holds no escape code at all. */
  color: boolean;
  /** Unchanged lines shown around each change (default 3). */
  context?: number;
  /** Time the line diff may take before the plain before/after view is shown instead (default 300 ms). */
  timeoutMs?: number;
  /** Terminal columns: longer lines are cut with a marker (default: cut at 500 characters). */
  width?: number;
  /** Old/new line numbers in a gutter (default true). */
  lineNumbers?: boolean;
  /** Body lines rendered at most; the rest is counted in a closing marker (default 2,000). */
  maxLines?: number;
  /**
   * Wrap lines longer than `width` onto continuation lines instead of cutting them:
   * nothing is left out, and each continuation line keeps the gutter (blank numbers,
   * the same +/- sign), so the diff's columns hold on a narrow terminal.
   */
  wrap?: boolean;
  /** Mark the changed words within a changed line: inverse when coloured, `[-old-]` / `{+new+}` without colour (default false). */
  words?: boolean;
}

/** A rendered file diff; `fallback` is true when no line diff was computed and a plain before/after view is shown. */
export interface DiffView {
  text: string;
  fallback: boolean;
  /** True when the text holds the whole diff: no line cut to the width, no line left out. */
  complete: boolean;
}

type Colors = ReturnType<typeof pc.createColors>;

const DEFAULT_CONTEXT = 3;
const DEFAULT_TIMEOUT_MS = 300;
const DEFAULT_MAX_LINES = 2000;
const DEFAULT_LINE_CHARS = 500;
/** Smallest content budget per line, whatever the width, so a narrow terminal still shows something. */
const MIN_LINE_CHARS = 20;
/** Content kept on a cut line however long its cut marker. */
const MIN_KEPT_CHARS = 8;
/** Beyond this many UTF-16 units on both sides together, diffing is not even tried. */
const MAX_DIFF_CHARS = 16 * 1024 * 1024;
/** A deleted file longer than this is summarised and only its first lines shown. */
const DELETE_FULL_LINES = 200;
const DELETE_PREVIEW_LINES = 40;

/**
 * One content line made safe and cut to `budget` columns: unsafe characters become
 * visible escapes (shown inverse when coloured), and a cut line ends, within the
 * budget, with a marker giving how many characters were left out.
 */
function safeLine(line: string, budget: number, c: Colors, words?: Marking): { text: string; cut: boolean } {
  if (!words && line.length <= budget && !UNSAFE.test(line)) return { text: line, cut: false };
  const whole = take(line, budget, c, words);
  if (whole.taken === line.length) return { text: whole.text, cut: false };
  const reserve = cutMarker(line.length).length;
  const cut = take(line, Math.max(MIN_KEPT_CHARS, budget - reserve), c, words);
  return { text: cut.text + c.dim(cutMarker(line.length - cut.taken)), cut: true };
}

/**
 * One content line made safe and split into pieces of at most `budget` columns,
 * breaking after a space near the end of a piece when there is one. Nothing is dropped.
 */
function wrapPieces(line: string, budget: number, c: Colors, words?: Marking): string[] {
  const pieces: string[] = [];
  let rest = line;
  let offset = 0;
  for (;;) {
    const at0 = words ? { ...words, from: offset } : undefined;
    const whole = take(rest, budget, c, at0);
    if (whole.taken >= rest.length) {
      pieces.push(whole.text);
      return pieces;
    }
    // Prefer to break after a space in the last quarter of the piece.
    const space = rest.lastIndexOf(" ", whole.taken - 1);
    const at = space >= Math.floor(whole.taken * 0.75) ? space + 1 : whole.taken;
    const piece = take(rest.slice(0, at), budget, c, at0);
    pieces.push(piece.text);
    const step = Math.max(1, piece.taken);
    rest = rest.slice(step);
    offset += step;
  }
}

function cutMarker(rest: number): string {
  return `…[+${count(rest)} chars]`;
}

/**
 * Changed words to mark on a line: their stretches (in the whole line's UTF-16 units),
 * the line's sign, and where in the line the text being rendered starts.
 */
interface Marking {
  marks: WordMarks;
  sign: "+" | "-";
  from: number;
}

/** Without colour, changed words are bracketed as `git diff --word-diff` does: `[-old-]` and `{+new+}`. */
const PLAIN_MARKS = { "-": ["[-", "-]"], "+": ["{+", "+}"] } as const;

/** The escaped prefix of `line` that fits in `budget` columns, and how many UTF-16 units of `line` it covers. */
function take(line: string, budget: number, c: Colors, words?: Marking): { text: string; taken: number } {
  let text = "";
  let used = 0;
  let taken = 0;
  // A marked stretch is built apart and closed when it ends (or the piece does).
  let marked: string | null = null;
  const [open, close] = words ? PLAIN_MARKS[words.sign] : ["", ""];
  const plain = !c.isColorSupported;
  const closeMark = () => {
    if (marked === null) return;
    text += plain ? `${open}${marked}${close}` : c.inverse(marked);
    marked = null;
  };
  for (const ch of line) {
    const unsafe = UNSAFE.test(ch);
    const shown = unsafe ? escapeChar(ch) : ch;
    const inMark = words ? isMarked(words.marks, words.from + taken) : false;
    const extra = inMark && marked === null && plain ? open.length + close.length : 0;
    if (used + shown.length + extra > budget) break;
    if (!inMark) closeMark();
    else if (marked === null) marked = "";
    const piece = unsafe ? c.inverse(shown) : shown;
    if (marked !== null) marked += unsafe && !plain ? shown : piece;
    else text += piece;
    used += shown.length + extra;
    taken += ch.length;
  }
  closeMark();
  return { text, taken };
}

function isMarked(marks: WordMarks, at: number): boolean {
  for (const [start, end] of marks) {
    if (at < start) return false;
    if (at < end) return true;
  }
  return false;
}

/** Collects body lines up to a cap, counting what it leaves out. */
class Body {
  readonly lines: string[] = [];
  omitted = 0;
  /** Lines shortened to the width, or content summarised away (the old side of a before/after view). */
  shortened = 0;
  constructor(private remaining: number) {}

  push(line: string): void {
    if (this.remaining > 0) {
      this.lines.push(line);
      this.remaining--;
    } else this.omitted++;
  }

  /** Room left before the cap. */
  get room(): number {
    return this.remaining;
  }
}

/** Formats numbers the way the review shows sizes: `1,234`. */
function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** `100644`-style mode, as git and the review show it. */
function formatMode(mode: number): string {
  return (0o100000 | (mode & 0o7777)).toString(8);
}

/** Renders one file change as a reviewable diff: header, then hunks, a binary size line, or a bounded plain view. */
export function renderFileDiff(change: FileChange, options: DiffViewOptions): DiffView {
  const c = pc.createColors(options.color);
  const lineNumbers = options.lineNumbers ?? true;
  const body = new Body(Math.max(1, options.maxLines ?? DEFAULT_MAX_LINES));
  const out: string[] = [header(change, c)];
  const note = (text: string) => out.push(c.yellow(text));

  if (change.base.mode !== null && change.after && change.base.mode !== change.after.mode) {
    note(`mode ${formatMode(change.base.mode)} → ${formatMode(change.after.mode)}`);
  } else if (change.kind === "create" && change.after && (change.after.mode & 0o111) !== 0) {
    note(`mode ${formatMode(change.after.mode)}`);
  }

  const beforeBytes = change.kind === "create" ? new Uint8Array() : change.before;
  const afterBytes = change.after?.bytes;
  let before = beforeBytes ? decodeText(beforeBytes) : undefined;
  let after = afterBytes ? decodeText(afterBytes) : undefined;
  let fallback = false;

  if (change.binary || before === null || after === null) {
    // Never approvable unseen: flagged loudly with size and hash, and shown as text whenever it mostly is text.
    out.push(c.bold(c.red(binaryLine(change))));
    out.push(c.yellow(hashLine(change)));
    if (!revealable(change, before, afterBytes)) return finish(out, body, c, fallback);
    const became = change.kind === "modify" && !!before;
    note(`${became ? "became binary: " : ""}shown as text, with every byte that is not text shown as \\xNN`);
    before = beforeBytes ? revealText(beforeBytes) : undefined;
    after = afterBytes ? revealText(afterBytes) : undefined;
  }
  if (before && after) {
    if (before.style.eol !== after.style.eol && change.kind === "modify")
      note(`line endings ${eolName(before)} → ${eolName(after)}`);
    if (before.style.bom !== after.style.bom && change.kind === "modify")
      note(after.style.bom ? "byte-order mark added" : "byte-order mark removed");
  }

  const width = (gutter: number) => {
    const columns = options.width ?? DEFAULT_LINE_CHARS + gutter + 1;
    return Math.max(MIN_LINE_CHARS, columns - gutter - 1);
  };

  if (change.kind === "create") {
    const lines = splitLines(after!.text);
    if (lines.length === 0) note("empty file");
    const w = lineNumbers ? digits(lines.length) : 0;
    plainLines(body, lines, "+", w, width(w && w + 1), c, options.wrap === true);
    noNewlineMarker(body, after!.text, c);
  } else if (change.kind === "delete") {
    if (!before) {
      note(`deleted; its content is not known (${count(change.base.size)} bytes)`);
      return finish(out, body, c, fallback);
    }
    const lines = splitLines(before.text);
    const shown = lines.length > DELETE_FULL_LINES ? lines.slice(0, DELETE_PREVIEW_LINES) : lines;
    if (shown.length < lines.length)
      note(`deleted: all ${count(lines.length)} lines; the first ${shown.length} follow`);
    const w = lineNumbers ? digits(lines.length) : 0;
    plainLines(body, shown, "-", w, width(w && w + 1), c, options.wrap === true);
    if (shown.length < lines.length) body.omitted += lines.length - shown.length;
    else noNewlineMarker(body, before.text, c);
  } else if (!before) {
    note("base content not known (the file changed on disk since it was staged): showing the new content only");
    fallback = true;
    body.shortened++; // what the change replaces is not shown
    const lines = splitLines(after!.text);
    const w = lineNumbers ? digits(lines.length) : 0;
    plainLines(body, lines, "+", w, width(w && w + 1), c, options.wrap === true);
  } else {
    fallback = modifyBody(body, before, after!, options, lineNumbers, width, c, note);
  }
  return finish(out, body, c, fallback);
}

/** The hunks of a modification, or the plain before/after view when the diff is too costly; returns whether it fell back. */
function modifyBody(
  body: Body,
  before: DecodedText,
  after: DecodedText,
  options: DiffViewOptions,
  lineNumbers: boolean,
  width: (gutter: number) => number,
  c: Colors,
  note: (text: string) => void,
): boolean {
  if (before.text === after.text) {
    note("no change in content");
    return false;
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const tooLarge = before.text.length + after.text.length > MAX_DIFF_CHARS;
  const patch = tooLarge
    ? undefined
    : structuredPatch("a", "b", before.text, after.text, undefined, undefined, {
        context: options.context ?? DEFAULT_CONTEXT,
        timeout: timeoutMs,
      });
  if (!patch) {
    note(
      tooLarge
        ? "too large to diff: plain before/after view"
        : `diff gave up after ${timeoutMs} ms: plain before/after view`,
    );
    plainBeforeAfter(body, before.text, after.text, lineNumbers, width, c, options.wrap === true);
    return true;
  }
  const w = digits(Math.max(lineCount(before.text), lineCount(after.text)));
  const gutter = lineNumbers ? 2 * w + 2 : 0;
  const budget = width(gutter);
  for (const hunk of patch.hunks)
    renderHunk(body, hunk, lineNumbers ? w : 0, budget, c, options.wrap === true, options.words === true);
  return false;
}

/** One hunk: a cyan `@@` header, then context, removed (red) and added (green) lines with old/new numbers. */
function renderHunk(
  body: Body,
  hunk: Pick<StructuredPatchHunk, "oldStart" | "oldLines" | "newStart" | "newLines" | "lines">,
  w: number,
  budget: number,
  c: Colors,
  wrap: boolean,
  markWords = false,
): void {
  body.push(c.cyan(hunkHeader(hunk)));
  let oldNo = hunk.oldStart;
  let newNo = hunk.newStart;
  const num = (n: number | null) => (n === null ? " ".repeat(w) : String(n).padStart(w));
  const words = markWords ? hunkWordMarks(hunk.lines) : new Map<number, WordMarks>();
  for (const [at, raw] of hunk.lines.entries()) {
    const sign = raw[0];
    const marks = words.get(at);
    const marking: Marking | undefined = marks && (sign === "+" || sign === "-") ? { marks, sign, from: 0 } : undefined;
    const content = raw.slice(1);
    if (sign === "\\") {
      body.push(c.dim(`${w ? " ".repeat(2 * w + 2) : ""}\\ No newline at end of file`));
      continue;
    }
    const oldShown = sign === "+" ? null : oldNo++;
    const newShown = sign === "-" ? null : newNo++;
    const gutter = w ? c.dim(`${num(oldShown)} ${num(newShown)} `) : "";
    const paint = (text: string) => (sign === "+" ? c.green(text) : sign === "-" ? c.red(text) : text);
    if (wrap) {
      const blank = w ? " ".repeat(2 * w + 2) : "";
      wrapPieces(content, budget, c, marking).forEach((piece, k) =>
        body.push((k === 0 ? gutter : blank) + paint(`${sign}${piece}`)),
      );
      continue;
    }
    const safe = safeLine(content, budget, c, marking);
    if (safe.cut) body.shortened++;
    body.push(gutter + paint(`${sign}${safe.text}`));
  }
}

/** One hunk alone, as the file's diff shows it (header, numbered lines), for reviewing a file hunk by hunk. */
export function renderHunkView(
  hunk: Pick<StructuredPatchHunk, "oldStart" | "oldLines" | "newStart" | "newLines" | "lines">,
  options: { color: boolean; width?: number; wrap?: boolean; words?: boolean },
): string {
  const c = pc.createColors(options.color);
  const body = new Body(Number.MAX_SAFE_INTEGER);
  const w = digits(Math.max(hunk.oldStart + hunk.oldLines, hunk.newStart + hunk.newLines));
  const columns = options.width ?? DEFAULT_LINE_CHARS + 2 * w + 3;
  renderHunk(
    body,
    hunk,
    w,
    Math.max(MIN_LINE_CHARS, columns - 2 * w - 3),
    c,
    options.wrap ?? true,
    options.words ?? true,
  );
  return `${body.lines.join("\n")}\n`;
}

/** `@@ -a,b +c,d @@` with the unified-diff convention that an empty range starts one line earlier. */
export function hunkHeader(hunk: Pick<StructuredPatchHunk, "oldStart" | "oldLines" | "newStart" | "newLines">): string {
  const oldStart = hunk.oldLines === 0 ? hunk.oldStart - 1 : hunk.oldStart;
  const newStart = hunk.newLines === 0 ? hunk.newStart - 1 : hunk.newStart;
  return `@@ -${oldStart},${hunk.oldLines} +${newStart},${hunk.newLines} @@`;
}

/** The labelled whole-before then whole-after view, each half of the line cap so the new content is always seen. */
function plainBeforeAfter(
  body: Body,
  beforeText: string,
  afterText: string,
  lineNumbers: boolean,
  width: (gutter: number) => number,
  c: Colors,
  wrap: boolean,
): void {
  const before = splitLines(beforeText);
  const after = splitLines(afterText);
  const w = lineNumbers ? digits(Math.max(before.length, after.length)) : 0;
  const half = Math.max(1, Math.floor((body.room - 2) / 2));
  body.push(c.bold(`--- before (${count(before.length)} lines)`));
  plainLines(body, before.slice(0, half), "-", w, width(w && w + 1), c, wrap);
  if (before.length > half) {
    body.shortened += before.length - half;
    body.push(c.dim(`… ${count(before.length - half)} more lines of the old content not shown`));
  }
  body.push(c.bold(`+++ after (${count(after.length)} lines)`));
  plainLines(body, after, "+", w, width(w && w + 1), c, wrap);
}

/** Lines that are all added or all removed, numbered from 1 in a `w`-digit gutter (none when `w` is 0). */
function plainLines(
  body: Body,
  lines: string[],
  sign: "+" | "-",
  w: number,
  budget: number,
  c: Colors,
  wrap = false,
): void {
  const paint = sign === "+" ? c.green : c.red;
  for (let i = 0; i < lines.length; i++) {
    if (body.room === 0) {
      body.omitted += lines.length - i;
      return;
    }
    const gutter = w ? c.dim(`${String(i + 1).padStart(w)} `) : "";
    if (wrap) {
      const blank = w ? " ".repeat(w + 1) : "";
      wrapPieces(lines[i]!, budget, c).forEach((piece, k) =>
        body.push((k === 0 ? gutter : blank) + paint(sign + piece)),
      );
      continue;
    }
    const safe = safeLine(lines[i]!, budget, c);
    if (safe.cut) body.shortened++;
    body.push(gutter + paint(sign + safe.text));
  }
}

function noNewlineMarker(body: Body, text: string, c: Colors): void {
  if (text !== "" && !text.endsWith("\n")) body.push(c.dim("\\ No newline at end of file"));
}

/** The first line: path, kind and line counts. */
function header(change: FileChange, c: Colors): string {
  const kind =
    change.kind === "create" ? c.green("create") : change.kind === "delete" ? c.red("delete") : c.yellow("modify");
  const counts = change.binary ? "" : `  ${c.green(`+${change.added}`)} ${c.red(`-${change.removed}`)}`;
  return `${c.bold(visible(change.path))}  ${kind}${counts}`;
}

/** `binary file, 1,234 → 2,345 bytes`, or its create/delete form. */
function binaryLine(change: FileChange): string {
  const beforeSize = change.before?.length ?? change.base.size;
  if (change.kind === "create") return `binary file, ${count(change.after?.bytes.length ?? 0)} bytes (new)`;
  if (change.kind === "delete") return `binary file, ${count(beforeSize)} bytes (deleted)`;
  return `binary file, ${count(beforeSize)} → ${count(change.after?.bytes.length ?? 0)} bytes`;
}

/** `sha256 <before> → <after>`: what the owner can check a binary file against. */
function hashLine(change: FileChange): string {
  const before = change.base.hash ?? "";
  const after = change.after?.hash ?? "";
  if (change.kind === "create") return `sha256 ${after}`;
  if (change.kind === "delete") return `sha256 ${before} (deleted)`;
  return `sha256 ${before} → ${after}`;
}

/**
 * True when a binary change can be shown as text: a text file turned binary
 * always is, and so is new content whose bytes are nearly all text (a script with a
 * few NUL or invalid bytes); an image or archive is not.
 */
function revealable(
  change: FileChange,
  before: DecodedText | null | undefined,
  afterBytes: Uint8Array | undefined,
): boolean {
  if (change.kind === "delete" || !afterBytes || !change.after) return false;
  if (change.kind === "modify" && before) return true;
  // Whatever its bytes, a file that is run or named as source is read as code: padding it with junk does not hide it.
  if (change.flags.includes("runs-code") || (change.after.mode & 0o111) !== 0 || SOURCE_NAME.test(change.path))
    return true;
  return unreadableBytes(afterBytes) <= Math.max(16, afterBytes.length / 10);
}

/** Names of files that hold source code, scripts or configuration: shown as text even when their bytes say binary. */
const SOURCE_NAME =
  /\.(?:[cm]?[jt]sx?|json5?|sh|bash|zsh|fish|ps1|bat|cmd|py|pyw|rb|pl|pm|php|lua|go|rs|c|cc|cpp|h|hpp|java|kt|kts|scala|swift|cs|fs|ex|exs|erl|hs|clj|r|sql|ya?ml|toml|ini|cfg|conf|env|xml|html?|css|scss|vue|svelte|md|txt|mk|gradle|cmake|nix|tf|dockerfile)$|(?:^|\/)(?:[Mm]akefile|Dockerfile|Containerfile|Jenkinsfile|Rakefile|Gemfile|\.[A-Za-z0-9_-]+rc)$/;

function eolName(text: DecodedText): string {
  return text.style.eol === "\r\n" ? "CRLF" : "LF";
}

/** Lines in a text, as splitLines counts them, without building the array. */
function lineCount(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

function digits(n: number): number {
  return String(Math.max(1, n)).length;
}

function finish(out: string[], body: Body, c: Colors, fallback: boolean): DiffView {
  const lines = [...out, ...body.lines];
  if (body.omitted > 0)
    lines.push(c.dim(`… ${count(body.omitted)} more lines not shown (review --patch prints the whole diff)`));
  return { text: lines.join("\n") + "\n", fallback, complete: body.omitted === 0 && body.shortened === 0 };
}
