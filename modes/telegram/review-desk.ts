import type { AgentRun } from "../../app/agent-run.ts";
import type { Changeset } from "../../core/staging/changeset.ts";
import type { ResolvedButton } from "./button-tokens.ts";
import { CardMessages } from "./card-messages.ts";
import { CardPresses } from "./card-presses.ts";
import { CardSettler } from "./card-settle.ts";
import { loadPending } from "./card-state.ts";
import { LiveRuns } from "./live-runs.ts";
import type { Keyboard } from "./outbox.ts";
import { NOT_PENDING } from "./press-answers.ts";
import type { ReviewCard } from "./review-cards.ts";
import type { ReviewDeps } from "./review-deps.ts";

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
 * revision gets a new card. The desk routes; the jobs are the card's messages
 * (`CardMessages`), the presses (`CardPresses`), the settling (`CardSettler`) and the
 * runs kept for revision (`LiveRuns`).
 */
export class ReviewDesk {
  private readonly live = new LiveRuns();
  private readonly messages: CardMessages;
  private readonly settler: CardSettler;
  private readonly presses: CardPresses;

  constructor(private readonly deps: ReviewDeps) {
    this.messages = new CardMessages(deps);
    this.settler = new CardSettler(deps, this.messages, this.live);
    this.presses = new CardPresses(deps, this.messages, this.settler);
  }

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
    if (run) this.live.keep(cs.id, run);
    return this.messages.present(cs);
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
        return this.presses.cardPress(button, messageId);
    }
  }

  /**
   * Takes a text message as the reason for an awaited rejection (the one whose
   * prompt it replies to, else the oldest awaited); false when none is awaited.
   */
  reason(text: string, replyTo?: number): Promise<boolean> {
    return this.presses.reason(text, replyTo);
  }

  /** A message offering to review or discard a pending changeset (for a busy /agent, /cancel, a restart). */
  offer(cs: Changeset, lead: string): { html: string; keyboard: Keyboard } {
    return this.messages.offer(cs, lead);
  }

  /** Rejects every undecided file of a pending changeset and closes its cards (Discard, or a goal sent with "discard it"). */
  discardNow(cs: Changeset): Promise<void> {
    return this.settler.discardNow(cs);
  }

  private async reviewAgain(button: ResolvedButton): Promise<string> {
    const cs = loadPending(this.deps.runtime, button.subject, button.digest);
    if (!cs) return NOT_PENDING;
    await this.present(cs, this.live.get(cs.id));
    return "Card sent.";
  }

  private async discard(button: ResolvedButton): Promise<string> {
    const cs = loadPending(this.deps.runtime, button.subject, button.digest);
    if (!cs) return NOT_PENDING;
    await this.settler.discardNow(cs);
    return "Discarded.";
  }
}
