import type { HunkVerdict } from "../../app/keep-hunks.ts";
import type { Rejection } from "../../app/rejection.ts";
import type { ReviewVerdict } from "../../app/settle-review.ts";
import type { Changeset } from "../../core/staging/changeset.ts";
import { fileHunks } from "../../core/staging/file-hunks.ts";

/** The page's say on one file, bound to the content it was shown: the file's digest, and each hunk's digest when split. */
export interface PageDecision {
  digest: string;
  decision: "approve" | "reject" | "hunks";
  reason?: string;
  /** Per hunk digest: keep or drop, with a reason for a drop. */
  hunks?: Record<string, { keep: boolean; reason?: string }>;
}

/**
 * The decisions made on the page so far, per path. Each is checked against the
 * changeset when made (the digest must be the file's, every hunk one of its hunks),
 * so a decision made on content that has since changed is refused, never applied.
 */
export class PageDecisions {
  private readonly byPath = new Map<string, PageDecision>();

  /** Records (or, with null, clears) a decision; returns why it was refused, or null. */
  set(cs: Changeset, path: string, decision: PageDecision | null): string | null {
    const file = cs.files.find((f) => f.path === path);
    if (!file) return `${path} is not a file of this changeset.`;
    if (decision === null) {
      this.byPath.delete(path);
      return null;
    }
    if (decision.digest !== file.digest)
      return `${path} changed since the page showed it: reload to see it as it is now.`;
    if (decision.decision === "hunks") {
      const hunks = fileHunks(file);
      if (!hunks || hunks.length < 2) return `${path} cannot be decided hunk by hunk.`;
      const known = new Set(hunks.map((h) => h.digest));
      const given = Object.keys(decision.hunks ?? {});
      if (given.some((d) => !known.has(d))) return `A hunk of ${path} changed since the page showed it: reload.`;
    }
    this.byPath.set(path, {
      digest: decision.digest,
      decision: decision.decision,
      ...(decision.reason?.trim() ? { reason: decision.reason.trim().slice(0, 2000) } : {}),
      ...(decision.hunks ? { hunks: decision.hunks } : {}),
    });
    return null;
  }

  /** Decisions as the page shows them again after a reload. */
  all(): Record<string, PageDecision> {
    return Object.fromEntries(this.byPath);
  }

  clear(): void {
    this.byPath.clear();
  }

  /**
   * The verdict to settle, or the list of what is still undecided. Every file must be
   * decided, and every hunk of a file decided hunk by hunk; a decision whose digest is no
   * longer the file's counts as undecided.
   */
  verdict(cs: Changeset): { verdict: ReviewVerdict } | { undecided: string[] } {
    const approved: string[] = [];
    const rejected: Rejection[] = [];
    const hunks: HunkVerdict[] = [];
    const undecided: string[] = [];
    for (const file of cs.files.filter((f) => !cs.decisions?.[f.path])) {
      const d = this.byPath.get(file.path);
      if (!d || d.digest !== file.digest) {
        undecided.push(file.path);
        continue;
      }
      if (d.decision === "approve") approved.push(file.path);
      else if (d.decision === "reject") rejected.push({ path: file.path, reason: d.reason ?? "" });
      else {
        const all = fileHunks(file) ?? [];
        const say = d.hunks ?? {};
        if (all.some((h) => !say[h.digest])) {
          undecided.push(`${file.path} (a hunk is undecided)`);
          continue;
        }
        hunks.push({
          path: file.path,
          fileDigest: file.digest,
          kept: all.filter((h) => say[h.digest]!.keep).map((h) => h.digest),
          reasons: all
            .filter((h) => !say[h.digest]!.keep && say[h.digest]!.reason?.trim())
            .map((h) => ({ hunk: h.digest, reason: say[h.digest]!.reason!.trim().slice(0, 2000) })),
        });
      }
    }
    if (undecided.length > 0) return { undecided };
    return { verdict: { approved, rejected, hunks } };
  }
}
