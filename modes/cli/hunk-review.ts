import type { HunkVerdict } from "../../app/keep-hunks.ts";
import type { FileChange } from "../../core/staging/changeset.ts";
import { fileHunks, keptBytes } from "../../core/staging/file-hunks.ts";
import { hunkLabel } from "../../core/staging/hunks.ts";
import { sha256 } from "../../core/hash.ts";
import { lineDelta } from "../../core/staging/line-diff.ts";
import { decodeText } from "../../core/text.ts";
import { renderFileDiff, renderHunkView } from "../../render/diff-view.ts";
import { visible } from "../../render/visible-text.ts";
import type { CliIO } from "./io.ts";

/**
 * How going through a file's hunks ended: `partial` some hunks kept and the result
 * approved; `approved` every hunk kept and approved (the file as staged); `rejected` the
 * file rejected (`n` on the result, or nothing kept), with the dropped hunks' reasons;
 * `back` the owner left the hunks undecided; `quit` input ended.
 */
export type HunkOutcome =
  | { kind: "partial"; verdict: HunkVerdict }
  | { kind: "approved" }
  | { kind: "rejected"; reason: string }
  | { kind: "back" }
  | { kind: "quit" };

const HUNK_PROMPT = "Keep this hunk? [y]es [n]o [r]eason [q]uit the rest ";
const HUNK_HELP = [
  "y  keep this hunk",
  "n  drop it",
  "r  drop it with a reason (the agent reads it)",
  "q  drop this hunk and the rest of the file's",
];

/** The `h` key: each hunk of `file` shown and kept or dropped, then the result shown whole and approved or rejected. */
export async function reviewHunks(io: CliIO, file: FileChange): Promise<HunkOutcome> {
  const c = io.colors;
  const hunks = fileHunks(file);
  if (!hunks || hunks.length < 2) return { kind: "back" };
  const kept = new Set<number>();
  const reasons: { hunk: string; reason: string }[] = [];
  let dropRest = false;
  for (const hunk of hunks) {
    if (dropRest) break;
    io.out(
      `\n${c.bold(`${visible(file.path)} — hunk ${hunk.index + 1} of ${hunks.length}`)}\n${renderHunkView(hunk, { color: io.color, width: io.columns })}`,
    );
    for (;;) {
      const key = await io.key(HUNK_PROMPT, "ynrq?");
      if (key === null) return { kind: "quit" };
      if (key === "y") kept.add(hunk.index);
      else if (key === "q") dropRest = true;
      else if (key === "r") {
        const reason = await io.prompt("Reason (Enter on an empty line to go back): ");
        if (reason === null) return { kind: "quit" };
        if (reason.trim() === "") continue;
        reasons.push({ hunk: hunk.digest, reason: reason.trim() });
      } else if (key !== "n") {
        io.out(HUNK_HELP.map((l) => `  ${l}\n`).join(""));
        continue;
      }
      break;
    }
  }
  // The result is shown whole before it counts: what `y` approves is exactly this diff.
  const bytes = keptBytes(file, hunks, kept);
  io.out(`\n${c.bold(`${visible(file.path)}: kept ${kept.size} of ${hunks.length} hunks; the file would become:`)}\n`);
  const view = renderFileDiff(resultChange(file, bytes), {
    color: io.color,
    width: io.columns,
    wrap: true,
    maxLines: Number.MAX_SAFE_INTEGER,
    words: true,
  });
  io.out(kept.size === 0 ? "(unchanged: nothing of the staged change would be written)\n" : view.text);
  for (;;) {
    const key = await io.key("Approve this result? [y]es [n]o (reject the file) ", "yn");
    if (key === null) return { kind: "quit" };
    const named = reasons.map((r) => {
      const hunk = hunks.find((h) => h.digest === r.hunk)!;
      return `hunk ${hunk.index + 1} of ${hunks.length} (${hunkLabel(hunk)}) was dropped: ${r.reason}`;
    });
    if (key === "n") return { kind: "rejected", reason: named.join("; ") };
    if (kept.size === hunks.length) return { kind: "approved" };
    return {
      kind: "partial",
      verdict: {
        path: file.path,
        fileDigest: file.digest,
        kept: hunks.filter((h) => kept.has(h.index)).map((h) => h.digest),
        reasons,
      },
    };
  }
}

/** The file change as it would be with `bytes` as its result: what the whole-diff view of the kept hunks renders. */
function resultChange(file: FileChange, bytes: Uint8Array): FileChange {
  const before = file.before ? (decodeText(file.before)?.text ?? "") : "";
  const delta = lineDelta(before, decodeText(bytes)?.text ?? "");
  return {
    ...file,
    after: { bytes, hash: sha256(bytes), mode: file.after?.mode ?? 0o644 },
    added: delta.added,
    removed: delta.removed,
  };
}
