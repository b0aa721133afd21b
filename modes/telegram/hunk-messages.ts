import type { Hunk } from "../../core/staging/hunks.ts";
import { sha256 } from "../../core/hash.ts";
import { renderHunkView } from "../../render/diff-view.ts";
import { MESSAGE_LIMIT, shortPath } from "./diff-delivery.ts";
import { escapeHtml } from "./html.ts";
import type { HunkSplit } from "./review-cards.ts";
import { splitAtLines } from "./split-text.ts";

/** Room kept for a hunk message's title, part counter and decision line. */
const HEADER_ROOM = 300;

/**
 * One hunk as phone messages: its whole view (never a line cut or left out) in `<pre>`
 * parts of at most one message each, cut at line breaks as the long-diff messages are.
 * The last part carries the Keep / Drop buttons.
 */
export function hunkMessages(path: string, hunk: Hunk, total: number): string[] {
  const view = renderHunkView(hunk, { color: false, wrap: false, width: Number.MAX_SAFE_INTEGER, words: false });
  const pieces = splitAtLines(view, MESSAGE_LIMIT - HEADER_ROOM);
  const title = `✂ <b>Hunk ${hunk.index + 1}/${total}</b> <code>${escapeHtml(shortPath(path))}</code>`;
  return pieces.map(
    (piece, i) =>
      `${title}${pieces.length > 1 ? ` (part ${i + 1}/${pieces.length})` : ""}\n<pre>${escapeHtml(piece)}</pre>`,
  );
}

/** What `Apply kept` binds to: the file's content and the decision on each of its hunks. */
export function splitDigest(fileDigest: string, split: HunkSplit): string {
  return sha256([fileDigest, ...split.hunks.map((h) => `${h.digest}:${h.decision ?? "-"}`)].join("\n"));
}
