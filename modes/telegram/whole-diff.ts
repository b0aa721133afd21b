import type { FileChange } from "../../core/staging/changeset.ts";
import { splitLines } from "../../core/staging/line-diff.ts";
import { decodeText } from "../../core/text.ts";
import { renderFileDiff } from "../../render/diff-view.ts";
import { visible } from "../../render/visible-text.ts";

/**
 * The plain diff view (no colour, no line numbers) with no line cut to a width, or
 * null when it would leave any line out (more than `maxLines` body lines, or a long
 * deletion shown as a preview). What it returns is the whole diff, nothing less.
 */
export function wholeDiffView(change: FileChange, maxLines = Number.MAX_SAFE_INTEGER): string | null {
  const view = renderFileDiff(change, { color: false, lineNumbers: false, width: Number.POSITIVE_INFINITY, maxLines });
  return view.complete ? view.text : null;
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
  if (!before)
    throw new Error(
      `The whole diff of ${change.path} cannot be shown; review it in a terminal with \`pencil review\`.`,
    );
  const header = renderFileDiff(change, { color: false, lineNumbers: false, maxLines: 1 }).text.split("\n")[0]!;
  const lines = splitLines(before.text).map((line) => `-${visible(line)}`);
  return [header, `deleted: all ${lines.length.toLocaleString("en-US")} lines follow`, ...lines].join("\n") + "\n";
}
