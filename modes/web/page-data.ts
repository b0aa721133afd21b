import type { Changeset, FileChange } from "../../core/staging/changeset.ts";
import { fileHunks } from "../../core/staging/file-hunks.ts";
import { hunkLabel } from "../../core/staging/hunks.ts";
import { splitLines } from "../../core/staging/line-diff.ts";
import { decodeText, revealText } from "../../core/text.ts";
import { intentLine, intentWarns } from "../../render/intent-line.ts";
import { summarizeChangeset } from "../../render/summary.ts";
import { escapeChar, UNSAFE } from "../../render/visible-text.ts";
import { hunkWordMarks, type WordMarks } from "../../render/word-marks.ts";

/** The part of highlight.js the page uses. Loaded untyped: its type declarations pull the DOM's types into the whole program. */
interface Highlighter {
  highlight(code: string, options: { language: string; ignoreIllegals: boolean }): { value: string };
  getLanguage(name: string): object | undefined;
}
let loaded: Highlighter | null = null;
/**
 * highlight.js, loaded when the page first colours a file: with its ~190 languages it costs about 100 ms of CPU, more
 * than the rest of `pencil review` together, which `--patch` and a review without a terminal never need. A literal
 * require, which the bundler follows, so the single executable carries highlight.js too.
 */
function hljs(): Highlighter {
  loaded ??= require("highlight.js") as Highlighter;
  return loaded;
}

/** One diff line as the page draws it: sign, old and new line numbers, and its content as safe HTML (syntax colours, word marks). */
interface PageRow {
  t: " " | "-" | "+" | "\\";
  o: number | null;
  n: number | null;
  h: string;
}

/** A hunk of a file on the page; `digest` is what a keep or drop of it binds to (null when the file cannot be split). */
interface PageHunk {
  digest: string | null;
  label: string;
  rows: PageRow[];
}

/** Everything the page shows of one file: what it is, its flags, and its diff (or, for a binary change, sizes and hashes). */
export interface PageFile {
  path: string;
  digest: string;
  kind: FileChange["kind"];
  added: number;
  removed: number;
  flags: string[];
  binary: boolean;
  /** Several hunks, each of which may be kept or dropped. */
  splittable: boolean;
  notes: string[];
  hunks: PageHunk[];
  binaryInfo: {
    before: number | null;
    after: number | null;
    beforeHash: string | null;
    afterHash: string | null;
  } | null;
}

/** The changeset's summary for the page: goal, totals, and per file its counts, flags, provenance and models. */
export function pageSummary(cs: Changeset) {
  const summary = summarizeChangeset(cs);
  return {
    id: cs.id,
    goal: cs.goal,
    workspace: cs.workspace,
    models: cs.models,
    instructions: (cs.instructions ?? []).map((f) => ({
      source: f.source,
      kind: f.kind,
      within: f.within ?? null,
      quote: f.quote,
    })),
    // The model's opinion of the diff against the goal, as the terminal and the card word it.
    intent: cs.intent ? { line: intentLine(cs.intent), warns: intentWarns(cs.intent) } : null,
    totals: summary.totals,
    files: summary.files.map((f, i) => ({ ...f, index: i, digest: cs.files[i]!.digest })),
  };
}

/** Lines whose content is longer than this are not syntax-coloured (minified files): escaped only. */
const MAX_HIGHLIGHT = 2000;

/** The page's view of one file change. Pure: no I/O. */
export function pageFile(file: FileChange): PageFile {
  const base = {
    path: file.path,
    digest: file.digest,
    kind: file.kind,
    added: file.added,
    removed: file.removed,
    flags: file.flags,
    binary: file.binary,
  };
  const language = languageOf(file.path);
  const notes: string[] = [];
  if (file.binary) {
    const info = {
      before: file.kind === "create" ? null : (file.before?.length ?? file.base.size),
      after: file.after?.bytes.length ?? null,
      beforeHash: file.base.hash,
      afterHash: file.after?.hash ?? null,
    };
    notes.push("Binary change: approve it on its own; Approve all does not cover it.");
    const shown = file.after ? revealText(file.after.bytes).text : "";
    const rows = file.kind === "delete" ? [] : plainRows(shown, "+", null);
    return {
      ...base,
      splittable: false,
      notes,
      hunks: rows.length
        ? [{ digest: null, label: "content as text (bytes that are not text shown as \\xNN)", rows }]
        : [],
      binaryInfo: info,
    };
  }
  const hunks = fileHunks(file);
  if (hunks) {
    return {
      ...base,
      splittable: hunks.length > 1,
      notes,
      binaryInfo: null,
      hunks: hunks.map((h) => ({ digest: h.digest, label: hunkLabel(h), rows: hunkRows(h, language) })),
    };
  }
  const after = file.after ? (decodeText(file.after.bytes)?.text ?? "") : "";
  if (file.kind === "create")
    return {
      ...base,
      splittable: false,
      notes,
      binaryInfo: null,
      hunks: [{ digest: null, label: "new file", rows: plainRows(after, "+", language) }],
    };
  if (file.kind === "delete") {
    const before = file.before ? (decodeText(file.before)?.text ?? "") : null;
    if (before === null) notes.push(`Deleted; its content is not known (${file.base.size} bytes).`);
    return {
      ...base,
      splittable: false,
      notes,
      binaryInfo: null,
      hunks: before === null ? [] : [{ digest: null, label: "deleted file", rows: plainRows(before, "-", language) }],
    };
  }
  notes.push(
    "The base content is not known (the file changed on disk since it was staged): the new content is shown whole, and approving it will be refused as a conflict.",
  );
  return {
    ...base,
    splittable: false,
    notes,
    binaryInfo: null,
    hunks: [{ digest: null, label: "new content", rows: plainRows(after, "+", language) }],
  };
}

function hunkRows(hunk: { oldStart: number; newStart: number; lines: string[] }, language: string | null): PageRow[] {
  const marks = hunkWordMarks(hunk.lines);
  let o = hunk.oldStart;
  let n = hunk.newStart;
  return hunk.lines.map((line, i) => {
    const t = line[0] as PageRow["t"];
    if (t === "\\") return { t, o: null, n: null, h: "\\ No newline at end of file" };
    const row: PageRow = {
      t,
      o: t === "+" ? null : o++,
      n: t === "-" ? null : n++,
      h: lineHtml(line.slice(1), language, marks.get(i)),
    };
    return row;
  });
}

function plainRows(text: string, sign: "+" | "-", language: string | null): PageRow[] {
  return splitLines(text).map((line, i) => ({
    t: sign,
    o: sign === "-" ? i + 1 : null,
    n: sign === "+" ? i + 1 : null,
    h: lineHtml(line.replace(/\r$/, ""), language, undefined),
  }));
}

/** A line as HTML: its changed words in `<mark>`, each stretch syntax-coloured, and every hidden or control character shown as an escape. */
function lineHtml(line: string, language: string | null, marks: WordMarks | undefined): string {
  const stretches: { text: string; marked: boolean }[] = [];
  let at = 0;
  for (const [start, end] of marks ?? []) {
    if (start > at) stretches.push({ text: line.slice(at, start), marked: false });
    stretches.push({ text: line.slice(start, end), marked: true });
    at = end;
  }
  if (at < line.length || stretches.length === 0) stretches.push({ text: line.slice(at), marked: false });
  return stretches
    .map((s) => {
      const html = safeHtml(s.text, line.length <= MAX_HIGHLIGHT ? language : null);
      return s.marked ? `<mark>${html}</mark>` : html;
    })
    .join("");
}

const UNSAFE_RUN = new RegExp(`(${UNSAFE.source})`, "g");

function safeHtml(text: string, language: string | null): string {
  return text
    .split(UNSAFE_RUN)
    .map((piece, i) => {
      if (i % 2 === 1)
        return `<span class="esc" title="hidden or control character">${escapeHtml(escapeChar(piece))}</span>`;
      if (!piece) return "";
      if (!language) return escapeHtml(piece);
      try {
        return hljs().highlight(piece, { language, ignoreIllegals: true }).value;
      } catch {
        return escapeHtml(piece);
      }
    })
    .join("");
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** highlight.js's language for a path's extension, or null when it has none (the lines are escaped plainly). */
function languageOf(path: string): string | null {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const ext = name.includes(".") ? name.slice(name.lastIndexOf(".") + 1).toLowerCase() : name.toLowerCase();
  const language = hljs().getLanguage(ext) ? ext : null;
  return language;
}
