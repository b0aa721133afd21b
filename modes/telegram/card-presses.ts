import type { Changeset } from "../../core/staging/changeset.ts";
import { fileHunks } from "../../core/staging/file-hunks.ts";
import type { ResolvedButton } from "./button-tokens.ts";
import type { CardMessages } from "./card-messages.ts";
import type { CardSettler } from "./card-settle.ts";
import { cardDigest, decideFile, isShown, matches, pendingChangeset, tokenOf } from "./card-state.ts";
import { shortPath } from "./diff-delivery.ts";
import { escapeHtml } from "./html.ts";
import { hunkMessages, splitDigest } from "./hunk-messages.ts";
import { DIFF_FIRST, NOT_PENDING, PRESS_AGAIN } from "./press-answers.ts";
import type { CardFile, HunkSplit, ReviewCard } from "./review-cards.ts";
import type { ReviewDeps } from "./review-deps.ts";

/**
 * A press on an open card, or a reason typed for a rejection: checked against the card and the store
 * (it acts only while the exact content it was shown for is still pending, and only once), recorded on
 * the card's state, and the card settled when every file is decided. Nothing is approved unseen: an
 * Approve on a file whose whole diff was not shown sends the diff instead.
 */
export class CardPresses {
  constructor(
    private readonly deps: ReviewDeps,
    private readonly messages: CardMessages,
    private readonly settler: CardSettler,
  ) {}

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
    const cs = pendingChangeset(this.deps.runtime, card);
    if (!cs) {
      await this.messages.close(card, "This changeset was reviewed elsewhere or has changed; this card is closed.");
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
    if (!(await this.settler.settleIfDone(card, cs))) await this.messages.refresh(card, cs);
    return true;
  }

  /** Acts on a press of a card's button; returns the text to answer the press with. */
  async cardPress(button: ResolvedButton, messageId?: number): Promise<string> {
    const card = this.deps.cards.get(button.subject);
    if (!card || card.state !== "open") return NOT_PENDING;
    if (card.messageId === null && messageId !== undefined) {
      // Its send failed without an answer, yet it arrived: now it is known, and can be updated.
      card.messageId = messageId;
      this.deps.cards.put(card);
    }
    const cs = pendingChangeset(this.deps.runtime, card);
    if (!cs) {
      await this.messages.close(card, "This changeset was reviewed elsewhere or has changed; this card is closed.");
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
        await this.messages.sendDiffs(card, cs, unseen);
        return unseen.length === 1
          ? "Diff sent — review it, then press Approve all again."
          : `${unseen.length} diffs sent — review them, then press Approve all again.`;
      }
      const decision = approving ? "approved" : "rejected";
      if (button.action === "approve-all-commit") card.commitAfter = true;
      for (const f of open) decideFile(this.deps.tokens, f, decision);
      this.deps.cards.put(card);
      if (!(await this.settler.settleIfDone(card, cs))) await this.messages.refresh(card, cs);
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
        await this.messages.sendDiffs(card, cs, [file]);
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
          await this.messages.sendDiffs(card, cs, [file]);
          return DIFF_FIRST;
        }
        decideFile(this.deps.tokens, file, button.action === "approve" ? "approved" : "rejected");
        if (button.action === "reject")
          file.awaitingReason = { promptId: null, skip: this.messages.skipButton(card, file) };
        break;
      default:
        return NOT_PENDING;
    }
    this.deps.cards.put(card);
    if (file.awaitingReason && button.action === "reject") await this.messages.promptReason(card, file);
    if (!(await this.settler.settleIfDone(card, cs))) await this.messages.refresh(card, cs);
    return button.action === "approve"
      ? "Approved."
      : button.action === "reject"
        ? "Rejected."
        : "Rejected without a reason.";
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
    await this.messages.refresh(card, cs);
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
    await this.messages.refresh(card, cs);
    const n = hunk.index + 1;
    return hunk.decision === "keep" ? `Kept hunk ${n}.` : `Dropped hunk ${n}.`;
  }

  /** Apply kept: the file is decided as base + the kept hunks (rejected when none was kept), bound to those very decisions. */
  private async applyKept(card: ReviewCard, cs: Changeset, file: CardFile, button: ResolvedButton): Promise<string> {
    const split = file.split;
    if (file.decision || !split?.applyKept || button.token !== tokenOf(split.applyKept)) return NOT_PENDING;
    if (button.digest !== splitDigest(file.digest, split)) return NOT_PENDING;
    split.kept = split.hunks.filter((h) => h.decision === "keep").map((h) => h.digest);
    decideFile(this.deps.tokens, file, split.kept.length > 0 ? "approved" : "rejected");
    this.deps.cards.put(card);
    if (!(await this.settler.settleIfDone(card, cs))) await this.messages.refresh(card, cs);
    return split.kept.length > 0
      ? `Approved ${split.kept.length} of ${split.hunks.length} hunks.`
      : "No hunk kept: the file is rejected.";
  }

  /** A press of an Approve button the card no longer shows: nothing is approved; the card is shown again as it is. */
  private async pressedTooEarly(card: ReviewCard, cs: Changeset): Promise<string> {
    await this.messages.refresh(card, cs);
    return PRESS_AGAIN;
  }
}
