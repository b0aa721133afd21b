import type { ApplyResult } from "../../core/apply/apply.ts";
import { shortPath } from "./diff-delivery.ts";
import { escapeHtml } from "./html.ts";

/** A settled card's closing lines, from the true apply result: applied, not applied (and why), rejected. */
export function outcomeLines(
  result: ApplyResult & { alreadyApplied?: string[] },
  rejected: readonly { path: string }[],
): string[] {
  const lines: string[] = [];
  // Each list stays under ~1,000 characters, so the outcome always fits on the card with its counts.
  const list = (paths: string[]) => {
    const shown: string[] = [];
    let chars = 0;
    for (const p of paths) {
      const short = shortPath(p);
      if (shown.length > 0 && chars + short.length > 1000) break;
      shown.push(`<code>${escapeHtml(short)}</code>`);
      chars += short.length + 2;
    }
    return shown.join(", ") + (paths.length > shown.length ? ` (+${paths.length - shown.length} more)` : "");
  };
  if (result.applied.length) lines.push(`✅ <b>Applied</b> to disk: ${list(result.applied)}`);
  const already = result.alreadyApplied ?? [];
  if (already.length) lines.push(`✅ <b>Already applied</b> by another review: ${list(already)}`);
  for (const c of result.conflicts)
    lines.push(
      `⚠️ <b>Not applied</b> <code>${escapeHtml(shortPath(c.path))}</code>: ${escapeHtml(c.reason.slice(0, 300))}`,
    );
  if (rejected.length) lines.push(`✖ <b>Rejected</b>: ${list(rejected.map((f) => f.path))}`);
  if (!result.applied.length && !already.length && !result.conflicts.length && !rejected.length)
    lines.push("Nothing to apply.");
  if (!result.applied.length && rejected.length && !result.conflicts.length) lines.push("Nothing was written.");
  return lines;
}
