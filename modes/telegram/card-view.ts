import { basename } from "node:path";
import type { Changeset } from "../../core/staging/changeset.ts";
import { renderFileDiff } from "../../render/diff-view.ts";
import { intentLine, intentWarns } from "../../render/intent-line.ts";
import { summarizeChangeset, type FileSummary } from "../../render/summary.ts";
import { shortPath } from "./diff-delivery.ts";
import { escapeHtml, htmlToPlain } from "./html.ts";
import { takeLines } from "./split-text.ts";
import type { Keyboard } from "./outbox.ts";
import type { CardFile, ReviewCard } from "./review-cards.ts";
import { wholeDiffView } from "./whole-diff.ts";

/** The visible length a card keeps under (Telegram's limit is 4,096). */
const CARD_LIMIT = 4000;
const READS_SHOWN = 5;

/** A card's message: HTML text and its buttons (none once settled or closed). */
export interface CardMessage {
  html: string;
  keyboard?: Keyboard;
  /** True when even the compact form was too long and lines were cut (with a count). */
  cut: boolean;
  /** Paths of the card's files whose whole diff this text shows inline, each for the exact content its card file was made for. */
  inlined: string[];
}

/**
 * Renders a review card: the changeset's goal and totals, then per file its kind,
 * +/- counts, flags, tools, model and what was read before, with the decision so far;
 * the outcome once settled. Small diffs are shown inline while they fit, each only
 * when it is the file's whole diff (no line cut, none left out). Buttons:
 * Diff / Approve / Reject per undecided file (Diff only once decided), then Approve
 * all / Reject all, which act on exactly the files listed on this card.
 */
export function renderCard(card: ReviewCard, cs: Changeset | null): CardMessage {
  const summaries = new Map((cs ? summarizeChangeset(cs).files : []).map((f) => [f.path, f]));
  const head = header(card, cs);
  const detailed = card.files.map((f, i) => fileBlock(f, i, summaries.get(f.path), true));
  const compact = card.files.map((f, i) => fileBlock(f, i, summaries.get(f.path), false));
  const tail = footer(card);
  const keyboardPart = card.state === "open" ? { keyboard: keyboard(card) } : {};
  const inline = card.state === "open" && cs ? inlineDiffs(card, cs) : { html: "", paths: [] };
  const candidates = [
    ...(inline.html ? [[head, ...detailed, inline.html, tail]] : []),
    [head, ...detailed, tail],
    [head, ...compact, tail],
    // A finished card can drop its file list: the outcome says what happened to each file.
    ...(card.state === "open" ? [] : [[head, tail]]),
  ];
  for (const [i, parts] of candidates.entries()) {
    const html = parts.filter(Boolean).join("\n");
    if (visibleLength(html) <= CARD_LIMIT)
      return { html, cut: false, inlined: inline.html && i === 0 ? inline.paths : [], ...keyboardPart };
  }
  // Still too long: the lines are cut with a count (never silently); an open card was sized to fit by its sender.
  const lines = [head, ...(card.state === "open" ? compact : []), ...tail.split("\n")];
  const html = takeLines(
    lines,
    CARD_LIMIT,
    (n) => `… ${n} more lines (pencil log shows the changeset)`,
    visibleLength,
  ).join("\n");
  return { html, cut: true, inlined: [], ...keyboardPart };
}

/** True when the card fits one Telegram message without cutting any line. */
export function cardFits(card: ReviewCard, cs: Changeset | null): boolean {
  return !renderCard(card, cs).cut;
}

function visibleLength(html: string): number {
  return htmlToPlain(html).length;
}

function header(card: ReviewCard, cs: Changeset | null): string {
  const lines = [`📝 <b>Review</b> <code>${escapeHtml(card.changesetId)}</code>`];
  if (!cs) return [...lines, "<i>This changeset can no longer be read from the store.</i>"].join("\n");
  lines.push(`<i>${escapeHtml(cs.goal.slice(0, 300))}</i> · 📍 ${escapeHtml(basename(cs.workspace))}`);
  if (cs.sessionGoal) lines.push(`<i>in the session of: ${escapeHtml(cs.sessionGoal.slice(0, 200))}</i>`);
  const shown = cs.files.filter((f) => card.files.some((c) => c.path === f.path));
  const added = shown.reduce((n, f) => n + f.added, 0);
  const removed = shown.reduce((n, f) => n + f.removed, 0);
  const batch = card.files.length < card.totalFiles ? ` (this card: ${card.files.length} of ${card.totalFiles})` : "";
  lines.push(
    `${card.files.length} ${card.files.length === 1 ? "file" : "files"}${batch}, +${added} −${removed}${cs.models.length ? ` · ${escapeHtml(cs.models.join(", "))}` : ""}`,
  );
  if (cs.revises) lines.push(`revises <code>${escapeHtml(cs.revises)}</code>`);
  // after-instructions: what the agent read that was written to an AI, or hidden, quoted with its source.
  for (const f of (cs.instructions ?? []).slice(0, 3))
    lines.push(
      `⚠️ <b>after-instructions</b>: read ${escapeHtml(f.source.slice(0, 200))}${f.kind === "hidden" ? " (hidden text)" : ""}: “${escapeHtml(f.quote.slice(0, 160))}”`,
    );
  // The model's opinion of the diff against the goal, recorded with the changeset: the same line as the terminal's.
  if (cs.intent)
    lines.push(`${intentWarns(cs.intent) ? "⚠️" : "🧭"} <i>${escapeHtml(intentLine(cs.intent).slice(0, 500))}</i>`);
  return lines.join("\n") + "\n";
}

function fileBlock(file: CardFile, index: number, s: FileSummary | undefined, detailed: boolean): string {
  const counts = s ? (s.binary ? "binary" : `+${s.added} −${s.removed}`) : "";
  const flags = s && s.flags.length ? ` ⚠️ <b>${escapeHtml(s.flags.join(", "))}</b>` : "";
  const mode = s?.mode ? ` · ${escapeHtml(s.mode)}` : "";
  const lines = [
    `<b>${index + 1}.</b> <code>${escapeHtml(shortPath(file.path))}</code> ${s ? s.kind : ""} ${counts}${flags}${mode}`,
  ];
  if (detailed && s) {
    const reads = s.readsBefore.length
      ? s.readsBefore
          .slice(0, READS_SHOWN)
          .map((p) => escapeHtml(shortPath(p)))
          .join(", ") + (s.readsBefore.length > READS_SHOWN ? ` (+${s.readsBefore.length - READS_SHOWN})` : "")
      : "nothing";
    lines.push(`    by ${escapeHtml(s.tools.join(", "))} · ${escapeHtml(s.models.join(", "))} · read before: ${reads}`);
  }
  const status = decisionText(file, detailed ? 300 : 60);
  if (status) lines.push(`    ${status}`);
  return lines.join("\n");
}

function decisionText(file: CardFile, reasonChars: number): string {
  const kept = file.split?.hunks.filter((h) => h.decision === "keep").length ?? 0;
  if (file.decision === "approved" && file.split?.kept)
    return `✅ approved: ${kept} of ${file.split.hunks.length} hunks kept, the others dropped`;
  if (file.decision === "approved") return "✅ approved";
  if (!file.decision && file.split) {
    const decided = file.split.hunks.filter((h) => h.decision).length;
    return decided === file.split.hunks.length
      ? `✂ ${kept} of ${decided} hunks kept — tap Apply kept`
      : `✂ split: ${decided} of ${file.split.hunks.length} hunks decided (${kept} kept)`;
  }
  if (file.decision !== "rejected") return "";
  if (file.awaitingReason) return "✖ rejected — send the reason as your next message, or tap Skip";
  if (!file.reason) return "✖ rejected";
  const reason = file.reason.length > reasonChars ? `${file.reason.slice(0, reasonChars)}…` : file.reason;
  return `✖ rejected: “${escapeHtml(reason)}”`;
}

function footer(card: ReviewCard): string {
  if (card.state !== "open") return card.outcome.length ? `\n${card.outcome.join("\n")}` : "";
  return `\n<i>Diff shows a file; Approve first sends a diff not shown above. Approve all acts on the ${card.files.length} ${card.files.length === 1 ? "file" : "files"} above.</i>`;
}

/** Inline diffs stop at this many characters: beyond it the owner taps Diff. */
const INLINE_DIFF_CHARS = 2500;
/** Inline diffs stop at this many body lines per file. */
const INLINE_DIFF_LINES = 60;

/**
 * In one `<pre>`, in card order, the diffs of the card's files that are short and
 * whole — of the very content each card file was made for — while they fit; and
 * the paths of the files shown. What goes inline counts as seen, so a view with a
 * line cut to the width or lines left out never does: it is compared with the
 * uncut view, not trusted by its looks. The others are left to their Diff button.
 */
function inlineDiffs(card: ReviewCard, cs: Changeset): { html: string; paths: string[] } {
  let joined = "";
  const paths: string[] = [];
  for (const f of card.files) {
    const change = cs.files.find((c) => c.path === f.path);
    // A binary change is shown by its Diff button, which also sends the file itself.
    if (!change || change.digest !== f.digest || change.binary) continue;
    const view = renderFileDiff(change, { color: false, lineNumbers: false, maxLines: INLINE_DIFF_LINES }).text;
    if (joined.length + view.length > INLINE_DIFF_CHARS) continue;
    if (view !== wholeDiffView(change, INLINE_DIFF_LINES)) continue;
    joined += (joined ? "\n" : "") + view;
    paths.push(f.path);
  }
  return { html: joined ? `<pre>${escapeHtml(joined)}</pre>` : "", paths };
}

function keyboard(card: ReviewCard): Keyboard {
  const rows = card.files.map((f, i) => {
    const diff = { text: `📄 Diff ${i + 1}`, callback_data: f.buttons.diff };
    if (f.decision) return [diff];
    const reject = { text: `✖ Reject ${i + 1}`, callback_data: f.buttons.reject };
    // Being split: no Approve of the whole file; Apply kept once every hunk has its Keep or Drop.
    if (f.split)
      return f.split.applyKept
        ? [diff, reject, { text: `✂ Apply kept ${i + 1}`, callback_data: f.split.applyKept }]
        : [diff, reject];
    const row = [diff, { text: `✅ Approve ${i + 1}`, callback_data: f.buttons.approve }, reject];
    if (f.buttons.hunks) row.push({ text: `✂ Hunks ${i + 1}`, callback_data: f.buttons.hunks });
    return row;
  });
  if (card.files.some((f) => !f.decision && !f.split)) {
    rows.push([
      { text: "✅ Approve all", callback_data: card.buttons.approveAll },
      { text: "✖ Reject all", callback_data: card.buttons.rejectAll },
    ]);
    if (card.buttons.approveAllCommit)
      rows.push([{ text: "✅ Approve all & commit", callback_data: card.buttons.approveAllCommit }]);
  }
  return { inline_keyboard: rows };
}
