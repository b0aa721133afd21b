import type { Changeset, FileChange } from "../../core/staging/changeset.ts";
import { exportPatch } from "../../render/patch-export.ts";
import { escapeHtml, htmlToPlain } from "./html.ts";
import { splitAtLines } from "./split-text.ts";
import { wholeDiffText, wholeDiffView } from "./whole-diff.ts";

/** A diff sent as one or a few HTML messages, each a `<pre>` block cut at line boundaries. */
export interface DiffMessages {
  kind: "messages";
  parts: string[];
}

/** A diff too long for a few messages, sent whole as a `.patch` document. */
export interface DiffDocument {
  kind: "document";
  filename: string;
  content: string;
  caption: string;
}

/** Telegram's limit on a message's visible text. */
export const MESSAGE_LIMIT = 4096;
/** Room kept for the header line and the part counter of each message. */
const HEADER_ROOM = 300;
/** A diff needing more messages than this goes as a document instead. */
const DEFAULT_MAX_DIFF_MESSAGES = 3;

/**
 * How to show one file's whole diff on the phone: the review's diff view, uncut (no
 * line shortened, none left out), in `<pre>` messages when it fits in a few, else the
 * file's full git patch as a document. Either is complete — the messages join back to
 * the whole view, the document holds the whole patch — so a delivery counts as the
 * owner having been shown the file.
 */
export function diffDelivery(
  cs: Changeset,
  file: FileChange,
  label: string,
  maxMessages = DEFAULT_MAX_DIFF_MESSAGES,
): DiffMessages | DiffDocument {
  // Every body line takes at least 2 characters, so a view with more lines than this cannot fit the messages anyway.
  const view = wholeDiffView(file, maxMessages * MESSAGE_LIMIT);
  const room = MESSAGE_LIMIT - HEADER_ROOM;
  // A line longer than one message would be split mid-line, its tail without its +/- sign: such a diff goes as a document.
  const fitsLines = view !== null && view.split("\n").every((line) => line.length <= room);
  const pieces = view === null || !fitsLines ? null : splitAtLines(view, room);
  const title = `<b>${escapeHtml(label)}</b> <code>${escapeHtml(shortPath(file.path))}</code>`;
  if (pieces && pieces.length <= maxMessages) {
    return {
      kind: "messages",
      parts: pieces.map(
        (piece, i) =>
          `${title}${pieces.length > 1 ? ` (part ${i + 1}/${pieces.length})` : ""}\n<pre>${escapeHtml(piece)}</pre>`,
      ),
    };
  }
  const exported = exportPatch(cs, { files: [file.path] });
  // A file a git patch cannot carry (outside the workspace, base not known) still goes whole, as the uncut diff view.
  const whole = exported.skipped.length === 0 && exported.patch !== "";
  const content = whole ? exported.patch : wholeDiffText(file);
  const lines = content.split("\n").length - 1;
  return {
    kind: "document",
    filename: `${baseName(file.path).replace(/[^A-Za-z0-9._-]/g, "_") || "file"}.${whole ? "patch" : "diff"}`,
    content,
    caption: `${title} +${file.added} −${file.removed}: the diff is ${lines.toLocaleString("en-US")} lines, too long for messages, so here it is whole as a file.`,
  };
}

/** A binary file's new content, sent as a document beside its diff. */
export interface BinaryDocument {
  filename: string;
  bytes: Uint8Array;
  caption: string;
}

/** The document that carries a binary change's new content (size and hash in the caption); null for text files and deletions. */
export function binaryDocument(file: FileChange): BinaryDocument | null {
  if (!file.binary || !file.after) return null;
  const became = file.flags.includes("became-binary") ? " — it was a text file" : "";
  return {
    filename: baseName(file.path).replace(/[^A-Za-z0-9._-]/g, "_") || "file",
    bytes: file.after.bytes,
    caption:
      `⚠️ <b>Binary change</b>${became}: <code>${escapeHtml(shortPath(file.path))}</code>, ${file.after.bytes.length.toLocaleString("en-US")} bytes, ` +
      `sha256 <code>${file.after.hash}</code>. This is exactly what would be written. Approve all does not cover it.`,
  };
}

/** Visible characters a packed message keeps under (Telegram's limit is 4,096). */
const PACK_LIMIT = 4000;

/**
 * Diff messages of several files packed into as few messages as fit, in order, each
 * part kept whole (never cut between messages), so that showing a card's many small
 * diffs takes a message or two rather than one each.
 */
export function packDiffMessages(parts: readonly string[]): string[] {
  const packed: string[] = [];
  for (const part of parts) {
    const joined = packed.length ? `${packed[packed.length - 1]}\n\n${part}` : null;
    if (joined !== null && htmlToPlain(joined).length <= PACK_LIMIT) packed[packed.length - 1] = joined;
    else packed.push(part);
  }
  return packed;
}

/** A path cut from the left to at most 200 characters, for headers and captions. */
export function shortPath(path: string): string {
  return path.length > 200 ? `…${path.slice(-199)}` : path;
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
