import type { Rejection } from "../../app/rejection.ts";
import { commitAfterApply } from "../../app/commit-on-approve.ts";
import type { Runtime } from "../../app/runtime.ts";
import { discardVerdict, settleReview, type Settlement } from "../../app/settle-review.ts";
import type { Changeset } from "../../core/staging/changeset.ts";
import { lockReleased } from "../../core/workspace-lock.ts";
import { revisionLimitText } from "../../render/revision-limit.ts";
import { outcomeLines } from "./card-outcome.ts";
import { isShown } from "./card-state.ts";
import type { CardMessages } from "./card-messages.ts";
import { shortPath } from "./diff-delivery.ts";
import { escapeHtml } from "./html.ts";
import type { LiveRuns } from "./live-runs.ts";
import type { ReviewCard } from "./review-cards.ts";
import type { ReviewDeps } from "./review-deps.ts";

/**
 * Settling on the phone: a card whose files are all decided, or a Discard, goes to the one settleReview
 * every front end uses (the same re-judging, conflict check and journal), and what follows is shown: the
 * next card of a large changeset, the reasons sent back to a live run, or why they cannot be.
 */
export class CardSettler {
  constructor(
    private readonly deps: ReviewDeps,
    private readonly messages: CardMessages,
    private readonly live: LiveRuns,
  ) {}

  /**
   * Applies the card's decisions once every file is decided and no reason is awaited,
   * shows the result on the card, then revises or moves on. False when not settled yet.
   */
  async settleIfDone(card: ReviewCard, cs: Changeset): Promise<boolean> {
    if (card.state !== "open" || card.files.some((f) => !f.decision || f.awaitingReason)) return false;
    // Approve never records an unseen file; a card saved by an older version could hold one, and it must not be applied.
    // A file approved hunk by hunk was shown hunk by hunk: each kept hunk's message was its whole content.
    const unseen = card.files.filter((f) => f.decision === "approved" && !f.split?.kept && !isShown(f));
    if (unseen.length > 0) {
      const names = unseen.map((f) => `<code>${escapeHtml(shortPath(f.path))}</code>`).join(", ");
      this.messages.finish(card, "closed", [
        `⚠️ <b>Nothing was applied</b>: ${names} ${unseen.length === 1 ? "was" : "were"} approved without the whole diff being shown.`,
      ]);
      await this.messages.refresh(card, cs);
      const offer = this.messages.offer(cs, "Review it again: every diff is shown before anything is approved.");
      await this.deps.outbox.send(this.deps.ownerId, offer.html, offer.keyboard);
      return true;
    }
    const approved = card.files.filter((f) => f.decision === "approved" && !f.split?.kept).map((f) => f.path);
    const hunks = card.files
      .filter((f) => f.decision === "approved" && f.split?.kept)
      .map((f) => ({ path: f.path, fileDigest: f.digest, kept: f.split!.kept!, reasons: [] }));
    const rejected: Rejection[] = card.files
      .filter((f) => f.decision === "rejected")
      .map((f) => ({ path: f.path, reason: f.reason ?? "" }));
    // The run revises from its own changeset object, so decisions go on that very object when it is the same content.
    const run = this.live.get(cs.id);
    const own = run?.changeset;
    if (own && own.id === cs.id && own.digest === cs.digest) cs = own;
    let settled: Settlement;
    const rt = this.runtimeOf(cs);
    try {
      // Another process applying in this workspace is waited for here, not inside the apply's synchronous wait, which
      // would stop the bot answering anyone until it is done.
      await lockReleased(rt.pencilHome, rt.ws.root);
      settled = settleReview(rt, cs, { approved, rejected, hunks }, run ?? null);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      this.messages.finish(card, "closed", [`⚠️ <b>Nothing was applied</b>: ${escapeHtml(why)}`]);
      await this.messages.refresh(card, cs);
      return true;
    }
    const { result, pending, next } = settled;
    const committed = card.commitAfter ? [escapeHtml(commitAfterApply(rt, cs, result, run?.outcome?.text ?? ""))] : [];
    this.messages.finish(card, "settled", [...outcomeLines(result, rejected), ...committed]);
    await this.messages.refresh(card, cs);
    if (pending) {
      // A large changeset: the next batch of undecided files gets its own card.
      if (run) this.live.keep(cs.id, run);
      await this.messages.present(cs);
      return true;
    }
    this.live.delete(cs.id);
    this.deps.tokens.revokeSubject(cs.id); // its Review / Discard offers are spent too
    if (next.kind === "run-gone") {
      await this.deps.outbox.send(
        this.deps.ownerId,
        "The agent that wrote this changeset is no longer running (the bot restarted since), so your reasons cannot go back to it. Run /agent again with them.",
      );
    } else if (next.kind === "round-limit") {
      await this.deps.outbox.send(this.deps.ownerId, revisionLimitText(next.limit, "/agent"));
    } else if (next.kind === "revise" && run) {
      this.deps.revise(run, next.reasons, result);
    }
    return true;
  }

  /** Rejects every undecided file of a pending changeset and closes its cards (Discard, or a goal sent with "discard it"). */
  async discardNow(cs: Changeset): Promise<void> {
    for (const card of this.deps.cards.openFor(cs.id))
      await this.messages.close(card, "Discarded: every undecided file was rejected.");
    const rt = this.runtimeOf(cs);
    await lockReleased(rt.pencilHome, rt.ws.root);
    // The same settle as every review: the run is left out, so nothing goes back to the agent.
    settleReview(rt, cs, discardVerdict(cs), null);
    this.live.delete(cs.id);
    this.deps.tokens.revokeSubject(cs.id);
    await this.deps.outbox.send(
      this.deps.ownerId,
      `🗑 Changeset <code>${escapeHtml(cs.id)}</code> discarded: nothing of it was written.`,
    );
  }

  /** The runtime to apply `cs` with: its own workspace's. */
  private runtimeOf(cs: Changeset): Runtime {
    return this.deps.runtimeFor?.(cs.workspace) ?? this.deps.runtime;
  }
}
