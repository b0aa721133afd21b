import { randomBytes } from "node:crypto";
import { GrammyError } from "grammy";
import { gitState } from "../../app/git-commit.ts";
import type { Changeset } from "../../core/staging/changeset.ts";
import { fileHunks } from "../../core/staging/file-hunks.ts";
import { ALREADY_DECIDED, NOT_PENDING } from "./press-answers.ts";
import { cardDigest, markShown } from "./card-state.ts";
import { cardFits, renderCard } from "./card-view.ts";
import { binaryDocument, diffDelivery, packDiffMessages, shortPath } from "./diff-delivery.ts";
import { escapeHtml } from "./html.ts";
import type { Keyboard, Outbox } from "./outbox.ts";
import type { CardFile, ReviewCard } from "./review-cards.ts";
import type { ReviewDeps } from "./review-deps.ts";

/** Files per card: 3 buttons each plus the two "all" buttons stay under Telegram's 100 buttons. */
const CARD_BATCH = 30;
/** Buttons a card keeps within (`✂ Hunks` buttons are offered while they fit). */
const MAX_BUTTONS = 100;

/**
 * What the owner sees of review cards: a new card (its buttons issued, bound to the content), the card
 * message edited to its state, a finished card's buttons retired, the diffs and the reason prompt sent
 * beside it, and the Review / Discard offer. It decides nothing: presses and settling change the state.
 */
export class CardMessages {
  constructor(private readonly deps: ReviewDeps) {}

  /** Sends a card for the next undecided files of `cs`, closing older open cards of it. */
  async present(cs: Changeset): Promise<ReviewCard | null> {
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
      buttons: { approveAll: approveAll!, rejectAll: rejectAll!, ...this.commitButton(id, allDigest, cs.workspace) },
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

  finish(card: ReviewCard, state: "settled" | "closed", outcome: string[]): void {
    card.state = state;
    card.outcome = outcome;
    for (const f of card.files) delete f.awaitingReason;
    // Every button the card ever showed (some were spent one by one before): an old copy of it says what became of it.
    // The card message's own buttons only: a hunk's buttons live on messages of their own.
    const onCard = { buttons: card.buttons, files: card.files.map((f) => f.buttons) };
    const shown = JSON.stringify(onCard).match(/p1:[A-Za-z0-9_-]{16}/g) ?? [];
    // The card's other tokens (a hunk's buttons, its Review / Discard offers) go in the same save.
    this.deps.tokens.retire(shown, state === "settled" ? ALREADY_DECIDED : NOT_PENDING, card.messageId, card.id);
    this.deps.cards.put(card);
  }

  async close(card: ReviewCard, note: string): Promise<void> {
    this.finish(card, "closed", [`<i>${escapeHtml(note)}</i>`]);
    await this.refresh(card, null);
  }

  async refresh(card: ReviewCard, cs: Changeset | null): Promise<void> {
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

  /**
   * Delivers the whole diffs of `files` (small ones packed into few messages, long ones
   * as documents), then records each as shown for the content delivered — only once
   * all of it was sent — and gives those files' Approve and the card's Approve all new
   * buttons: a press of the old ones was made before the diff arrived (a double tap, a
   * press delivered twice), so only a later press, on the card as it is now, approves.
   */
  async sendDiffs(card: ReviewCard, cs: Changeset, files: CardFile[]): Promise<void> {
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

  async promptReason(card: ReviewCard, file: CardFile): Promise<void> {
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

  skipButton(card: ReviewCard, file: CardFile): string {
    return this.deps.tokens.issue([
      { action: "skip-reason", subject: card.id, item: file.path, digest: file.digest, owner: this.deps.ownerId },
    ])[0]!;
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

  /** "Approve all & commit", when the owner turned it on (`git.commitButton`) and the workspace is in git. */
  private commitButton(id: string, allDigest: string, workspace: string): { approveAllCommit?: string } {
    // The changeset's own workspace, as the apply and the commit use (a card outlives a workspace switch).
    const rt = this.deps.runtimeFor?.(workspace) ?? this.deps.runtime;
    if (!rt.settings.gitCommitButton || !gitState(rt.ws.root)) return {};
    const [token] = this.deps.tokens.issue([
      { action: "approve-all-commit", subject: id, item: "all", digest: allDigest, owner: this.deps.ownerId },
    ]);
    return { approveAllCommit: token! };
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
