import type { FileChange } from "../../core/changeset.ts";
import { splitLines } from "../../core/line-diff.ts";
import { decodeText } from "../../core/text.ts";
import { renderFileDiff } from "../../render/diff-view.ts";
import { visible } from "../../render/visible-text.ts";

/**
 * The closing line renderFileDiff adds when it left lines out (its line cap, or a long
 * deletion's preview). Without line numbers no other line can look like it: content
 * lines start with their sign, notes and the header end otherwise.
 */
const OMITTED = /^… [\d,]+ more lines not shown \(review --patch prints the whole diff\)$/;
/** The marker of the plain before/after view (a diff too costly to compute) when it shortened the old content. */
const OLD_CONTENT_CUT = /^… [\d,]+ more lines of the old content not shown$/m;

/**
 * The plain diff view (no colour, no line numbers) with no line cut to a width, or
 * null when it would leave any line out (more than `maxLines` body lines, or a long
 * deletion shown as a preview). What it returns is the whole diff, nothing less.
 */
export function wholeDiffView(change: FileChange, maxLines = Number.MAX_SAFE_INTEGER): string | null {
  const text = renderFileDiff(change, { color: false, lineNumbers: false, width: Number.POSITIVE_INFINITY, maxLines }).text;
  const lines = text.split("\n");
  return OMITTED.test(lines[lines.length - 2] ?? "") || OLD_CONTENT_CUT.test(text) ? null : text;
}

/**
 * One file's whole diff as text, always complete: the uncut view, or — for a deletion
 * the view only previews — its header and every removed line.
 */
export function wholeDiffText(change: FileChange): string {
  const view = wholeDiffView(change);
  if (view !== null) return view;
  const before = change.kind === "delete" && change.before ? decodeText(change.before) : null;
  // Only a long deletion's preview leaves lines out at an unlimited cap; anything else is a broken promise, so refuse.
  if (!before) throw new Error(`The whole diff of ${change.path} cannot be shown; review it in a terminal with \`pencil review\`.`);
  const header = renderFileDiff(change, { color: false, lineNumbers: false, maxLines: 1 }).text.split("\n")[0]!;
  const lines = splitLines(before.text).map((line) => `-${visible(line)}`);
  return [header, `deleted: all ${lines.length.toLocaleString("en-US")} lines follow`, ...lines].join("\n") + "\n";
}
