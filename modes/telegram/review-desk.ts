import { randomBytes } from "node:crypto";
import { GrammyError } from "grammy";
import type { ApplyResult } from "../../core/apply/apply.ts";
import type { Changeset } from "../../core/staging/changeset.ts";
import { sha256 } from "../../core/hash.ts";
import type { AgentRun } from "../../app/agent-run.ts";
import type { Rejection } from "../../app/rejection.ts";
import { commitAfterApply } from "../../app/commit-on-approve.ts";
import { gitState } from "../../app/git-commit.ts";
import { discardVerdict, settleReview, type Settlement } from "../../app/settle-review.ts";
import { lockReleased } from "../../core/workspace-lock.ts";
import { revisionLimitText } from "../../render/revision-limit.ts";
import type { Runtime } from "../../app/runtime.ts";
import type { ButtonTokens, ResolvedButton } from "./button-tokens.ts";
import { outcomeLines } from "./card-outcome.ts";
import { cardFits, renderCard } from "./card-view.ts";
import { binaryDocument, diffDelivery, packDiffMessages, shortPath } from "./diff-delivery.ts";
import { escapeHtml } from "./html.ts";
import type { Keyboard, Outbox } from "./outbox.ts";
import type { CardFile, HunkSplit, ReviewCard, ReviewCards } from "./review-cards.ts";
import { fileHunks } from "../../core/staging/file-hunks.ts";
import { hunkMessages, splitDigest } from "./hunk-messages.ts";

/** The answer to every press that finds nothing pending for it. */
export const NOT_PENDING = "This is no longer pending.";
/** The answer to a button of a card already decided (an old copy: a card sent again after a lost connection). */
export const ALREADY_DECIDED = "Already decided on another copy of this card; nothing more was done.";
/** The answer to an Approve press on a file whose whole diff had not been shown: the diff was sent instead. */
export const DIFF_FIRST = "Diff sent — review it, then press Approve again.";
/** The answer to a press of an Approve button made before the diff it needed was sent: only a press on the card as it is now approves. */
export const PRESS_AGAIN = "The diff was sent after this button was shown: press Approve on the card again.";
/** Files per card: 3 buttons each plus the two "all" buttons stay under Telegram's 100 buttons. */
export const CARD_BATCH = 30;
/** Buttons a card keeps within (`✂ Hunks` buttons are offered while they fit). */
const MAX_BUTTONS = 100;
/** Changesets whose agent is kept for a revision (older ones can no longer be sent back). */
const LIVE_RUNS = 4;

/** What the review desk needs from the bot. */
export interface ReviewDeps {
  runtime: Runtime;
  /** The runtime of the workspace a changeset was made in, when the bot has it open (cards outlive a workspace switch). */
  runtimeFor?: (workspaceRoot: string) => Runtime | null;
  outbox: Outbox;
  tokens: ButtonTokens;
  cards: ReviewCards;
  ownerId: number;
  log: (line: string) => void;
  /** Sends rejections with reasons back to the run that wrote them (a detached revise run). */
  revise: (run: AgentRun, rejections: Rejection[], applied: ApplyResult) => void;
}

/**
 * Changeset review on the phone. A card shows a batch of files with per-file
 * Diff / Approve / Reject and Approve all / Reject all. Every press is checked
 * against the card and the store: it acts only while the exact content it was shown
 * for is still pending, and only once. Nothing is approved unseen: an Approve (or
 * Approve all) on a file whose whole diff the owner has not been shown — inline on
 * the card or by Diff — sends that diff instead, and only a later press approves.
 * When every file on the card is decided (and no reason is still awaited) the card
 * settles: the approved files are applied, the true result (conflicts included) is
 * written on the card, and rejections with reasons go back to the agent, whose
 * revision gets a new card.
 */
export class ReviewDesk {
  private readonly live = new Map<string, AgentRun>();

  constructor(private readonly deps: ReviewDeps) {}

  /** Runs kept for revision. */
  get liveSize(): number {
    return this.live.size;
  }

  /** The run that can still revise a changeset, if any. */
  liveRun(changesetId: string): AgentRun | undefined {
    return this.live.get(changesetId);
  }

  /** Sends a card for the next undecided files of `cs` (closing older open cards of it); `run` can revise it. */
  async present(cs: Changeset, run?: AgentRun): Promise<ReviewCard | null> {
    if (run) this.keepLive(cs.id, run);
    for (const old of this.deps.cards.openFor(cs.id)) await this.close(old, "Superseded by a newer card below.");
    const undecided = cs.files.filter((f) => !cs.decisions?.[f.path]);
    if (undecided.length === 0) return null;
    const id = `c-${randomBytes(6).toString("hex")}`;
    const batch = largestBatch(id, cs, undecided);
    const owner = this.deps.ownerId;
    const data = this.deps.tokens.issue(
      batch.flatMap((f) =>
        (["diff", "approve", "reject"] as const).map((action) => ({
          action,
          subject: id,
          item: f.path,
          digest: f.digest,
          owner,
        })),
      ),
    );
    const files: CardFile[] = batch.map((f, i) => ({
      path: f.path,
      digest: f.digest,
      buttons: { diff: data[3 * i]!, approve: data[3 * i + 1]!, reject: data[3 * i + 2]! },
    }));
    this.offerHunks(id, batch, files);
    const allDigest = cardDigest(files);
    const [approveAll, rejectAll] = this.deps.tokens.issue(
      (["approve-all", "reject-all"] as const).map((action) => ({
        action,
        subject: id,
        item: "all",
        digest: allDigest,
        owner,
      })),
    );
    const card: ReviewCard = {
      id,
      changesetId: cs.id,
      digest: cs.digest,
      chatId: owner,
      messageId: null,
      files,
      buttons: { approveAll: approveAll!, rejectAll: rejectAll!, ...this.commitButton(id, allDigest) },
      totalFiles: cs.files.length,
      state: "open",
      outcome: [],
      createdAt: Date.now(),
    };
    this.deps.cards.put(card);
    const view = renderCard(card, cs);
    let msg: Awaited<ReturnType<Outbox["send"]>>;
    try {
      // Sent again when the outcome is unknown: a second copy is harmless (its buttons are the same single-use
      // tokens, bound to the content), no card is not.
      msg = await this.deps.outbox.sendAgainIfUnknown(owner, view.html, view.keyboard);
    } catch (error) {
      // Telegram refused it (403: the owner blocked the bot…): no card is open, so /status offers Review.
      // A lost connection leaves it unknown: the card stays open (its buttons act if it arrived), but
      // with no message known /status offers Review too, and a new card supersedes this one.
      if (error instanceof GrammyError) this.finish(card, "closed", ["<i>This card could not be delivered.</i>"]);
      throw error;
    }
    card.messageId = msg.message_id;
    markShown(card, view.inlined);
    this.deps.cards.put(card);
    return card;
  }

  /**
   * Acts on a pressed card, review or discard button; returns the text to answer the press with.
   * `messageId` is the message the press came from (in the owner's chat).
   */
  async press(button: ResolvedButton, messageId?: number): Promise<string> {
    switch (button.action) {
      case "review":
        return this.reviewAgain(button);
      case "discard":
        return this.discard(button);
      default:
        return this.cardPress(button, messageId);
    }
  }

  /**
   * Takes a text message as the reason for an awaited rejection (the one whose
   * prompt it replies to, else the oldest awaited); false when none is awaited.
   */
  async reason(text: string, replyTo?: number): Promise<boolean> {
    const awaited = this.deps.cards
      .open()
      .flatMap((card) => card.files.filter((f) => f.awaitingReason).map((file) => ({ card, file })));
    const pick =
      awaited.find((a) => replyTo !== undefined && a.file.awaitingReason!.promptId === replyTo) ?? awaited[0];
    if (!pick) return false;
    const { card, file } = pick;
    const cs = this.pendingChangeset(card);
    if (!cs) {
      await this.close(card, "This changeset was reviewed elsewhere or has changed; this card is closed.");
      return false;
    }
    this.deps.tokens.revoke(tokenOf(file.awaitingReason!.skip));
    delete file.awaitingReason;
    file.reason = text.trim().slice(0, 2000);
    this.deps.cards.put(card);
    await this.deps.outbox.send(
      this.deps.ownerId,
      `Reason noted for <code>${escapeHtml(shortPath(file.path))}</code>.`,
    );
    if (!(await this.settleIfDone(card, cs))) await this.refresh(card, cs);
    return true;
  }

  /** A message offering to review or discard a pending changeset (for a busy /agent, /cancel, a restart). */
  offer(cs: Changeset, lead: string): { html: string; keyboard: Keyboard } {
    const [review, discard] = this.deps.tokens.issue(
      (["review", "discard"] as const).map((action) => ({
        action,
        subject: cs.id,
        item: "all",
        digest: cs.digest,
        owner: this.deps.ownerId,
      })),
    );
    const decided = Object.keys(cs.decisions ?? {}).length;
    const html =
      `${lead}\n📝 Changeset <code>${escapeHtml(cs.id)}</code> is waiting for review: <i>${escapeHtml(cs.goal.slice(0, 200))}</i> ` +
      `(${cs.files.length} ${cs.files.length === 1 ? "file" : "files"}${decided ? `, ${decided} decided` : ""}).`;
    return {
      html,
      keyboard: {
        inline_keyboard: [
          [
            { text: "📝 Review", callback_data: review! },
            { text: "🗑 Discard (Reject all)", callback_data: discard! },
          ],
        ],
      },
    };
  }

  private async cardPress(button: ResolvedButton, messageId?: number): Promise<string> {
    const card = this.deps.cards.get(button.subject);
    if (!card || card.state !== "open") return NOT_PENDING;
    if (card.messageId === null && messageId !== undefined) {
      // Its send failed without an answer, yet it arrived: now it is known, and can be updated.
      card.messageId = messageId;
      this.deps.cards.put(card);
    }
    const cs = this.pendingChangeset(card);
    if (!cs) {
      await this.close(card, "This changeset was reviewed elsewhere or has changed; this card is closed.");
      return NOT_PENDING;
    }
    if (button.action === "approve-all" || button.action === "reject-all" || button.action === "approve-all-commit") {
      if (button.digest !== cardDigest(card.files)) return NOT_PENDING;
      if (button.action === "approve-all" && button.token !== tokenOf(card.buttons.approveAll))
        return this.pressedTooEarly(card, cs);
      // A file being split hunk by hunk is decided by its own Apply kept (or Reject), never by the "all" buttons.
      const splitting = card.files.filter((f) => !f.decision && f.split && matches(cs, f));
      const pending = card.files.filter((f) => !f.decision && !f.split && matches(cs, f));
      if (pending.length === 0)
        return splitting.length > 0 ? "Files being split are decided by their own Apply kept." : NOT_PENDING;
      // Approve all never covers a binary change: each one needs its own Approve.
      const approving = button.action !== "reject-all";
      const binary = approving ? pending.filter((f) => cs.files.find((c) => c.path === f.path)?.binary) : [];
      const open = pending.filter((f) => !binary.includes(f));
      const binaryNote =
        binary.length === 0
          ? ""
          : ` ${binary.length} binary ${binary.length === 1 ? "change is" : "changes are"} not covered by Approve all: press its own Approve.`;
      if (open.length === 0)
        return `Approve all does not cover binary changes: press Approve on ${binary.length === 1 ? "it" : "each"} after its Diff.`;
      const unseen = approving ? open.filter((f) => !isShown(f)) : [];
      if (unseen.length > 0) {
        await this.sendDiffs(card, cs, unseen);
        return unseen.length === 1
          ? "Diff sent — review it, then press Approve all again."
          : `${unseen.length} diffs sent — review them, then press Approve all again.`;
      }
      const decision = approving ? "approved" : "rejected";
      if (button.action === "approve-all-commit") card.commitAfter = true;
      for (const f of open) this.decide(f, decision);
      this.deps.cards.put(card);
      if (!(await this.settleIfDone(card, cs))) await this.refresh(card, cs);
      return `${decision === "approved" ? "Approved" : "Rejected"} ${open.length} ${open.length === 1 ? "file" : "files"}.${binaryNote}`;
    }
    if (button.action === "hunk-keep" || button.action === "hunk-drop") return this.hunkPress(card, cs, button);
    if (button.action === "apply-kept") {
      const kept = card.files.find((f) => f.path === button.item);
      return kept && matches(cs, kept) ? this.applyKept(card, cs, kept, button) : NOT_PENDING;
    }
    const file = card.files.find((f) => f.path === button.item);
    if (!file || file.digest !== button.digest || !matches(cs, file)) return NOT_PENDING;
    switch (button.action) {
      case "hunks":
        return this.sendHunks(card, cs, file, button);
      case "diff":
        await this.sendDiffs(card, cs, [file]);
        return "Diff sent.";
      case "skip-reason":
        if (!file.awaitingReason) return NOT_PENDING;
        this.deps.tokens.revoke(button.token);
        delete file.awaitingReason;
        break;
      case "approve":
      case "reject":
        if (file.decision) return NOT_PENDING;
        if (button.action === "approve" && file.split)
          return "This file is being split: decide its hunks, then Apply kept.";
        if (button.action === "approve" && button.token !== tokenOf(file.buttons.approve))
          return this.pressedTooEarly(card, cs);
        if (button.action === "approve" && !isShown(file)) {
          await this.sendDiffs(card, cs, [file]);
          return DIFF_FIRST;
        }
        this.decide(file, button.action === "approve" ? "approved" : "rejected");
        if (button.action === "reject") file.awaitingReason = { promptId: null, skip: this.skipButton(card, file) };
        break;
      default:
        return NOT_PENDING;
    }
    this.deps.cards.put(card);
    if (file.awaitingReason && button.action === "reject") await this.promptReason(card, file);
    if (!(await this.settleIfDone(card, cs))) await this.refresh(card, cs);
    return button.action === "approve"
      ? "Approved."
      : button.action === "reject"
        ? "Rejected."
        : "Rejected without a reason.";
  }

  /** Records a decision and retires the file's Approve/Reject buttons (its Diff stays while the card is open). */
  private decide(file: CardFile, decision: "approved" | "rejected"): void {
    file.decision = decision;
    this.deps.tokens.revoke(tokenOf(file.buttons.approve), tokenOf(file.buttons.reject));
    if (file.buttons.hunks) this.deps.tokens.revoke(tokenOf(file.buttons.hunks));
    for (const h of file.split?.hunks ?? []) this.deps.tokens.revoke(tokenOf(h.buttons.keep), tokenOf(h.buttons.drop));
    if (file.split?.applyKept) this.deps.tokens.revoke(tokenOf(file.split.applyKept));
  }

  /** `✂ Hunks` for the card's files whose diff has several hunks, while the card's buttons stay within Telegram's 100. */
  private offerHunks(id: string, batch: Changeset["files"], files: CardFile[]): void {
    let buttons = 3 * files.length + 3;
    const splittable = batch.filter((f) => (fileHunks(f)?.length ?? 0) > 1);
    const offered = splittable.filter(() => ++buttons <= MAX_BUTTONS);
    const data = this.deps.tokens.issue(
      offered.map((f) => ({
        action: "hunks" as const,
        subject: id,
        item: f.path,
        digest: f.digest,
        owner: this.deps.ownerId,
      })),
    );
    offered.forEach((f, i) => {
      files.find((c) => c.path === f.path)!.buttons.hunks = data[i]!;
    });
  }

  /**
   * `✂ Hunks`: one message per hunk of the file (long ones in parts), each with Keep and
   * Drop bound to that hunk's exact content; the file leaves Approve all, and its card row
   * offers Apply kept once every hunk is decided.
   */
  private async sendHunks(card: ReviewCard, cs: Changeset, file: CardFile, button: ResolvedButton): Promise<string> {
    if (file.decision || file.split) return NOT_PENDING;
    const change = cs.files.find((f) => f.path === file.path)!;
    const hunks = fileHunks(change);
    if (!hunks || hunks.length < 2) return "This file's diff is a single hunk: decide it whole.";
    this.deps.tokens.revoke(button.token);
    const owner = this.deps.ownerId;
    const data = this.deps.tokens.issue(
      hunks.flatMap((h) =>
        (["hunk-keep", "hunk-drop"] as const).map((action) => ({
          action,
          subject: card.id,
          item: file.path,
          digest: h.digest,
          owner,
        })),
      ),
    );
    const split: HunkSplit = {
      hunks: hunks.map((h, i) => ({
        index: h.index,
        digest: h.digest,
        messageId: null,
        html: "",
        buttons: { keep: data[2 * i]!, drop: data[2 * i + 1]! },
      })),
    };
    file.split = split;
    this.deps.cards.put(card);
    for (const [i, hunk] of hunks.entries()) {
      const parts = hunkMessages(file.path, hunk, hunks.length);
      for (const part of parts.slice(0, -1)) await this.deps.outbox.send(owner, part);
      const entry = split.hunks[i]!;
      entry.html = parts.at(-1)!;
      const msg = await this.deps.outbox.send(owner, entry.html, {
        inline_keyboard: [
          [
            { text: `✅ Keep ${i + 1}`, callback_data: entry.buttons.keep },
            { text: `✖ Drop ${i + 1}`, callback_data: entry.buttons.drop },
          ],
        ],
      });
      entry.messageId = msg.message_id;
      this.deps.cards.put(card);
    }
    await this.refresh(card, cs);
    return `${hunks.length} hunks sent: Keep or Drop each, then Apply kept on the card.`;
  }

  /** Keep or Drop on one hunk: acts once, only on the hunk content it was shown with, while its file is still pending. */
  private async hunkPress(card: ReviewCard, cs: Changeset, button: ResolvedButton): Promise<string> {
    const file = card.files.find((f) => f.path === button.item);
    const hunk = file?.split?.hunks.find((h) => h.digest === button.digest);
    if (!file || !hunk || file.decision || hunk.decision || !matches(cs, file)) return NOT_PENDING;
    const change = cs.files.find((f) => f.path === file.path)!;
    if (!fileHunks(change)?.some((h) => h.digest === hunk.digest && h.index === hunk.index)) return NOT_PENDING;
    hunk.decision = button.action === "hunk-keep" ? "keep" : "drop";
    this.deps.tokens.revoke(tokenOf(hunk.buttons.keep), tokenOf(hunk.buttons.drop));
    const split = file.split!;
    if (split.hunks.every((h) => h.decision)) {
      split.applyKept = this.deps.tokens.issue([
        {
          action: "apply-kept",
          subject: card.id,
          item: file.path,
          digest: splitDigest(file.digest, split),
          owner: this.deps.ownerId,
        },
      ])[0]!;
    }
    this.deps.cards.put(card);
    if (hunk.messageId !== null)
      await this.deps.outbox.edit(
        card.chatId,
        hunk.messageId,
        `${hunk.html}\n${hunk.decision === "keep" ? "✅ kept" : "✖ dropped"}`,
      );
    await this.refresh(card, cs);
    const n = hunk.index + 1;
    return hunk.decision === "keep" ? `Kept hunk ${n}.` : `Dropped hunk ${n}.`;
  }

  /** Apply kept: the file is decided as base + the kept hunks (rejected when none was kept), bound to those very decisions. */
  private async applyKept(card: ReviewCard, cs: Changeset, file: CardFile, button: ResolvedButton): Promise<string> {
    const split = file.split;
    if (file.decision || !split?.applyKept || button.token !== tokenOf(split.applyKept)) return NOT_PENDING;
    if (button.digest !== splitDigest(file.digest, split)) return NOT_PENDING;
    split.kept = split.hunks.filter((h) => h.decision === "keep").map((h) => h.digest);
    this.decide(file, split.kept.length > 0 ? "approved" : "rejected");
    this.deps.cards.put(card);
    if (!(await this.settleIfDone(card, cs))) await this.refresh(card, cs);
    return split.kept.length > 0
      ? `Approved ${split.kept.length} of ${split.hunks.length} hunks.`
      : "No hunk kept: the file is rejected.";
  }

  private skipButton(card: ReviewCard, file: CardFile): string {
    return this.deps.tokens.issue([
      { action: "skip-reason", subject: card.id, item: file.path, digest: file.digest, owner: this.deps.ownerId },
    ])[0]!;
  }

  private async promptReason(card: ReviewCard, file: CardFile): Promise<void> {
    const msg = await this.deps.outbox.send(
      this.deps.ownerId,
      `✖ Rejected <code>${escapeHtml(shortPath(file.path))}</code>.\nWhy? Send the reason as your next message (or reply to this one) and the agent will revise it — or tap Skip to reject it without a reason.`,
      { inline_keyboard: [[{ text: "Skip reason", callback_data: file.awaitingReason!.skip }]] },
    );
    if (file.awaitingReason) {
      file.awaitingReason.promptId = msg.message_id;
      this.deps.cards.put(card);
    }
  }

  /**
   * Delivers the whole diffs of `files` (small ones packed into few messages, long ones
   * as documents), then records each as shown for the content delivered — only once
   * all of it was sent — and gives those files' Approve and the card's Approve all new
   * buttons: a press of the old ones was made before the diff arrived (a double tap, a
   * press delivered twice), so only a later press, on the card as it is now, approves.
   */
  private async sendDiffs(card: ReviewCard, cs: Changeset, files: CardFile[]): Promise<void> {
    const changes = files.map((file) => cs.files.find((f) => f.path === file.path)!);
    const deliveries = changes.map((change, i) =>
      diffDelivery(cs, change, `Diff ${card.files.indexOf(files[i]!) + 1}`),
    );
    for (const d of deliveries)
      if (d.kind === "document") await this.deps.outbox.document(this.deps.ownerId, d.filename, d.content, d.caption);
    const parts = deliveries.flatMap((d) => (d.kind === "messages" ? d.parts : []));
    for (const message of packDiffMessages(parts)) await this.deps.outbox.send(this.deps.ownerId, message);
    // A binary file's new content goes too, as a document: the owner can open exactly what would be written.
    for (const change of changes) {
      const binary = binaryDocument(change);
      if (binary) await this.deps.outbox.document(this.deps.ownerId, binary.filename, binary.bytes, binary.caption);
    }
    files.forEach((file, i) => (file.shown = changes[i]!.digest));
    this.renewApprovals(card, files);
    this.deps.cards.put(card);
    await this.refresh(card, cs);
  }

  /** New Approve buttons for `files` (still undecided) and a new Approve all; the old ones stay known until the card ends, so a late press of one gets told to press again. */
  private renewApprovals(card: ReviewCard, files: CardFile[]): void {
    const owner = this.deps.ownerId;
    const open = files.filter((f) => !f.decision);
    const fresh = this.deps.tokens.issue([
      ...open.map((f) => ({ action: "approve" as const, subject: card.id, item: f.path, digest: f.digest, owner })),
      { action: "approve-all" as const, subject: card.id, item: "all", digest: cardDigest(card.files), owner },
    ]);
    open.forEach((f, i) => (f.buttons.approve = fresh[i]!));
    card.buttons.approveAll = fresh.at(-1)!;
  }

  /** A press of an Approve button the card no longer shows: nothing is approved; the card is shown again as it is. */
  private async pressedTooEarly(card: ReviewCard, cs: Changeset): Promise<string> {
    await this.refresh(card, cs);
    return PRESS_AGAIN;
  }

  /**
   * Applies the card's decisions once every file is decided and no reason is awaited,
   * shows the result on the card, then revises or moves on. False when not settled yet.
   */
  /** "Approve all & commit", when the owner turned it on (`git.commitButton`) and the workspace is in git. */
  private commitButton(id: string, allDigest: string): { approveAllCommit?: string } {
    if (!this.deps.runtime.settings.gitCommitButton || !gitState(this.deps.runtime.ws.root)) return {};
    const [token] = this.deps.tokens.issue([
      { action: "approve-all-commit", subject: id, item: "all", digest: allDigest, owner: this.deps.ownerId },
    ]);
    return { approveAllCommit: token! };
  }

  private async settleIfDone(card: ReviewCard, cs: Changeset): Promise<boolean> {
    if (card.state !== "open" || card.files.some((f) => !f.decision || f.awaitingReason)) return false;
    // Approve never records an unseen file; a card saved by an older version could hold one, and it must not be applied.
    // A file approved hunk by hunk was shown hunk by hunk: each kept hunk's message was its whole content.
    const unseen = card.files.filter((f) => f.decision === "approved" && !f.split?.kept && !isShown(f));
    if (unseen.length > 0) {
      const names = unseen.map((f) => `<code>${escapeHtml(shortPath(f.path))}</code>`).join(", ");
      this.finish(card, "closed", [
        `⚠️ <b>Nothing was applied</b>: ${names} ${unseen.length === 1 ? "was" : "were"} approved without the whole diff being shown.`,
      ]);
      await this.refresh(card, cs);
      const offer = this.offer(cs, "Review it again: every diff is shown before anything is approved.");
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
    const own = this.live.get(cs.id)?.changeset;
    if (own && own.id === cs.id && own.digest === cs.digest) cs = own;
    const run = this.live.get(cs.id);
    let settled: Settlement;
    try {
      // Another process applying in this workspace is waited for here, not inside the apply's synchronous wait, which
      // would stop the bot answering anyone until it is done.
      const rt = this.runtimeOf(cs);
      await lockReleased(rt.pencilHome, rt.ws.root);
      settled = settleReview(rt, cs, { approved, rejected, hunks }, run ?? null);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      this.finish(card, "closed", [`⚠️ <b>Nothing was applied</b>: ${escapeHtml(why)}`]);
      await this.refresh(card, cs);
      return true;
    }
    const { result, pending, next } = settled;
    const committed = card.commitAfter
      ? [escapeHtml(commitAfterApply(this.deps.runtime, cs, result, run?.outcome?.text ?? ""))]
      : [];
    this.finish(card, "settled", [...outcomeLines(result, rejected), ...committed]);
    await this.refresh(card, cs);
    if (pending) {
      // A large changeset: the next batch of undecided files gets its own card.
      await this.present(cs, run);
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

  private async reviewAgain(button: ResolvedButton): Promise<string> {
    const cs = this.loadPending(button.subject, button.digest);
    if (!cs) return NOT_PENDING;
    await this.present(cs, this.live.get(cs.id));
    return "Card sent.";
  }

  private async discard(button: ResolvedButton): Promise<string> {
    const cs = this.loadPending(button.subject, button.digest);
    if (!cs) return NOT_PENDING;
    await this.discardNow(cs);
    return "Discarded.";
  }

  /** Rejects every undecided file of a pending changeset and closes its cards (Discard, or a goal sent with "discard it"). */
  async discardNow(cs: Changeset): Promise<void> {
    for (const card of this.deps.cards.openFor(cs.id))
      await this.close(card, "Discarded: every undecided file was rejected.");
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

  /** The card's changeset, if it is still pending with exactly the content the card was made for. */
  private pendingChangeset(card: ReviewCard): Changeset | null {
    return this.loadPending(card.changesetId, card.digest);
  }

  private loadPending(id: string, digest: string): Changeset | null {
    let cs: Changeset;
    try {
      cs = this.deps.runtime.store.load(id);
    } catch {
      return null;
    }
    return cs.id === id && cs.status === "pending" && cs.digest === digest ? cs : null;
  }

  private finish(card: ReviewCard, state: "settled" | "closed", outcome: string[]): void {
    card.state = state;
    card.outcome = outcome;
    for (const f of card.files) delete f.awaitingReason;
    // Every button the card ever showed (some were spent one by one before): an old copy of it says what became of it.
    // The card message's own buttons only: a hunk's buttons live on messages of their own.
    const onCard = { buttons: card.buttons, files: card.files.map((f) => f.buttons) };
    const shown = JSON.stringify(onCard).match(/p1:[A-Za-z0-9_-]{16}/g) ?? [];
    this.deps.tokens.retire(shown, state === "settled" ? ALREADY_DECIDED : NOT_PENDING, card.messageId);
    this.deps.tokens.revokeSubject(card.id);
    this.deps.cards.put(card);
  }

  private async close(card: ReviewCard, note: string): Promise<void> {
    this.finish(card, "closed", [`<i>${escapeHtml(note)}</i>`]);
    await this.refresh(card, null);
  }

  private async refresh(card: ReviewCard, cs: Changeset | null): Promise<void> {
    if (card.messageId === null) return;
    let shown = cs;
    if (!shown) {
      try {
        shown = this.deps.runtime.store.load(card.changesetId);
      } catch {
        shown = null;
      }
    }
    const view = renderCard(card, shown);
    const edited = await this.deps.outbox.edit(card.chatId, card.messageId, view.html, view.keyboard);
    if (edited && view.inlined.length > 0) {
      markShown(card, view.inlined);
      this.deps.cards.put(card);
    }
  }

  private keepLive(id: string, run: AgentRun): void {
    for (const [other, r] of this.live) if (r === run) this.live.delete(other);
    this.live.set(id, run);
    while (this.live.size > LIVE_RUNS) this.live.delete(this.live.keys().next().value!);
  }
}

/** The most undecided files (up to CARD_BATCH) whose card still fits one message; at least one. */
function largestBatch(id: string, cs: Changeset, undecided: Changeset["files"]): Changeset["files"] {
  const none = { diff: "-", approve: "-", reject: "-" };
  const draft = (files: Changeset["files"]): ReviewCard => ({
    id,
    changesetId: cs.id,
    digest: cs.digest,
    chatId: 0,
    messageId: null,
    totalFiles: cs.files.length,
    state: "open",
    outcome: [],
    createdAt: 0,
    files: files.map((f) => ({ path: f.path, digest: f.digest, buttons: none })),
    buttons: { approveAll: "-", rejectAll: "-" },
  });
  let size = Math.min(CARD_BATCH, undecided.length);
  while (size > 1 && !cardFits(draft(undecided.slice(0, size)), cs)) size -= 1;
  return undecided.slice(0, size);
}

/** What "Approve all" binds to: the paths and content digests of exactly the files the card shows. */
export function cardDigest(files: readonly { path: string; digest: string }[]): string {
  return sha256(files.map((f) => `${f.path}\0${f.digest}`).join("\n"));
}

/** True when the owner has been shown the whole diff of exactly the content this card file stands for. */
function isShown(file: CardFile): boolean {
  return file.shown !== undefined && file.shown === file.digest;
}

/** Records the card's files whose whole diffs went inline on it as shown (renderCard checked each digest). */
function markShown(card: ReviewCard, paths: readonly string[]): void {
  for (const f of card.files) if (paths.includes(f.path)) f.shown = f.digest;
}

/** True when the changeset still holds this file with the same content and no decision recorded elsewhere. */
function matches(cs: Changeset, file: CardFile): boolean {
  const change = cs.files.find((f) => f.path === file.path);
  return (
    change !== undefined &&
    change.digest === file.digest &&
    (cs.decisions?.[file.path] === undefined || cs.decisions[file.path] === file.decision)
  );
}

/** The token inside callback data. */
function tokenOf(data: string): string {
  return data.slice(data.indexOf(":") + 1);
}
