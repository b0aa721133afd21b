import type { Changeset } from "../core/staging/changeset.ts";
import { fileHunks, keptBytes } from "../core/staging/file-hunks.ts";
import { hunkLabel } from "../core/staging/hunks.ts";
import type { Rejection } from "./rejection.ts";
import { replaceStagedContent } from "./edit-staged.ts";
import type { Runtime } from "./runtime.ts";

/** The tool name recorded in a file's origins when the owner kept only some of its hunks. */
const HUNKS_KEPT = "hunks kept by you";

/**
 * The owner's say on one file reviewed hunk by hunk, bound to what was shown: the file's
 * digest and each hunk's digest. `kept` lists the digests of the hunks to write; every
 * other hunk of the file is dropped, and `reasons` holds the reasons given for drops.
 */
export interface HunkVerdict {
  path: string;
  fileDigest: string;
  kept: string[];
  reasons: { hunk: string; reason: string }[];
}

/** What the hunk verdicts come to, file by file, in the terms settleReview applies. */
export interface NarrowedVerdict {
  /** Files to write (their staged content is now base + kept hunks). */
  approved: string[];
  /** Files none of whose hunks was kept. */
  rejected: string[];
  /** Dropped hunks' reasons, each naming its hunk, for the agent. */
  reasons: Rejection[];
  /** Files whose content changed since their hunks were shown: nothing is decided on them. */
  stale: { path: string; reason: string }[];
}

/**
 * Replaces each hunk-reviewed file's staged content with its base plus the kept hunks
 * (re-diffed, marked "hunks kept by you", saved) in `changeset` itself, so that the
 * ordinary apply writes exactly those bytes, with its usual conflict checks.
 */
export function narrowToKeptHunks(runtime: Runtime, changeset: Changeset, verdicts: HunkVerdict[]): NarrowedVerdict {
  const out: NarrowedVerdict = { approved: [], rejected: [], reasons: [], stale: [] };
  for (const verdict of verdicts) {
    const file = changeset.files.find((f) => f.path === verdict.path);
    const hunks = file ? fileHunks(file) : null;
    if (!file || !hunks || file.digest !== verdict.fileDigest) {
      out.stale.push({
        path: verdict.path,
        reason: "its staged content changed since its hunks were shown (a revision or an edit); review it again",
      });
      continue;
    }
    const byDigest = new Map(hunks.map((h) => [h.digest, h]));
    const unknown = [...verdict.kept, ...verdict.reasons.map((r) => r.hunk)].filter((d) => !byDigest.has(d));
    if (unknown.length > 0) {
      out.stale.push({
        path: verdict.path,
        reason: "a hunk decided on is not one of this file's hunks; review it again",
      });
      continue;
    }
    const kept = new Set(verdict.kept.map((d) => byDigest.get(d)!.index));
    for (const r of verdict.reasons) {
      const hunk = byDigest.get(r.hunk)!;
      if (kept.has(hunk.index) || r.reason.trim() === "") continue;
      out.reasons.push({
        path: verdict.path,
        reason: `hunk ${hunk.index + 1} of ${hunks.length} (${hunkLabel(hunk)}) was dropped: ${r.reason.trim()}`,
      });
    }
    if (kept.size === 0) {
      out.rejected.push(verdict.path);
      continue;
    }
    if (kept.size < hunks.length) {
      const bytes = keptBytes(file, hunks, kept);
      const updated = replaceStagedContent(runtime, changeset, verdict.path, bytes, null, {
        tool: HUNKS_KEPT,
        edited: false,
      });
      Object.assign(changeset, updated);
    }
    out.approved.push(verdict.path);
  }
  return out;
}
