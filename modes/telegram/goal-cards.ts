import { randomBytes } from "node:crypto";
import { sha256 } from "../../core/hash.ts";
import type { ButtonTokens, ResolvedButton } from "./button-tokens.ts";
import { escapeHtml } from "./html.ts";
import type { Keyboard, Outbox } from "./outbox.ts";

/** Goal cards held at most; the oldest is dropped (its buttons stop working) when more arrive. */
const MAX_CARDS = 20;
/** Telegram's limit on a message's text, less room for the card's own words. */
const MAX_GOAL_CHARS = 3500;

interface HeldGoal {
  text: string;
  messageId: number;
  /** The workspace the card named: Run starts only there. */
  root: string;
}

/**
 * Goals shown back before they run (a transcribed voice note, a corrected one):
 * a card with Run / Edit / Cancel whose buttons act once, only on the exact text
 * shown. Edit asks for the goal as a message, which comes back as a new card.
 */
export class GoalCards {
  private readonly held = new Map<string, HeldGoal>();
  /** True after Edit was pressed, until the owner's next plain message. */
  private awaitingEdit = false;

  constructor(
    private readonly outbox: Outbox,
    private readonly tokens: ButtonTokens,
    private readonly ownerId: number,
    /** The line naming the workspace the goal would run in (HTML). */
    private readonly where: () => string,
    /** The active workspace's root. */
    private readonly activeRoot: () => string,
  ) {}

  /** Goal cards waiting for a press. */
  get size(): number {
    return this.held.size;
  }

  /** Shows `text` under `headingHtml` with Run / Edit / Cancel. */
  async show(text: string, headingHtml: string): Promise<void> {
    const goal = text.slice(0, MAX_GOAL_CHARS);
    const id = randomBytes(6).toString("hex");
    const digest = sha256(goal);
    const [run, edit, cancel] = this.tokens.issue(
      (["goal-run", "goal-edit", "goal-cancel"] as const).map((action) => ({
        action,
        subject: id,
        item: "goal",
        digest,
        owner: this.ownerId,
      })),
    );
    const keyboard: Keyboard = {
      inline_keyboard: [
        [
          { text: "▶️ Run", callback_data: run! },
          { text: "✏️ Edit", callback_data: edit! },
          { text: "✖️ Cancel", callback_data: cancel! },
        ],
      ],
    };
    const cut = goal.length < text.length ? "\n<i>(cut to its first 3,500 characters)</i>" : "";
    const message = await this.outbox.send(
      this.ownerId,
      `${headingHtml}\n<blockquote>${escapeHtml(goal)}</blockquote>${cut}\n${this.where()}\nRun it as the agent's goal?`,
      keyboard,
    );
    this.held.set(id, { text: goal, messageId: message.message_id, root: this.activeRoot() });
    while (this.held.size > MAX_CARDS) {
      const oldest = this.held.keys().next().value!;
      this.held.delete(oldest);
      this.tokens.revokeSubject(oldest);
    }
  }

  /** Acts on a press of a goal card's button; returns the answer for the press. `launch` starts the run. */
  async press(button: ResolvedButton, launch: (goal: string) => Promise<boolean>): Promise<string> {
    const goal = this.held.get(button.subject);
    if (!goal || sha256(goal.text) !== button.digest) return "This goal is no longer pending.";
    if (button.action === "goal-run" && goal.root !== this.activeRoot())
      return "This goal was shown for another workspace: switch back with /projects, then press Run.";
    // A run that cannot start now (another is going, a changeset waits) leaves the card as it is, to press again later.
    if (button.action === "goal-run" && !(await launch(goal.text)))
      return "Not started: see the message. This card still works.";
    this.held.delete(button.subject);
    this.tokens.revokeSubject(button.subject);
    const quoted = `<blockquote>${escapeHtml(goal.text)}</blockquote>`;
    switch (button.action) {
      case "goal-run":
        await this.outbox.edit(this.ownerId, goal.messageId, `▶️ <b>Running</b>\n${quoted}\n${this.where()}`);
        return "Starting…";
      case "goal-edit":
        this.awaitingEdit = true;
        await this.outbox.edit(
          this.ownerId,
          goal.messageId,
          `✏️ <b>Send the goal as it should read</b> (tap the text to copy it, correct it, send it). It will be shown again with Run / Edit / Cancel.\n<code>${escapeHtml(goal.text)}</code>`,
        );
        return "Send the corrected goal.";
      default:
        await this.outbox.edit(this.ownerId, goal.messageId, `✖️ <b>Dropped</b>: nothing ran.\n${quoted}`);
        return "Dropped.";
    }
  }

  /** Takes the owner's plain message as the corrected goal after Edit; false when no correction is awaited. */
  async takeCorrection(text: string): Promise<boolean> {
    if (!this.awaitingEdit) return false;
    this.awaitingEdit = false;
    await this.show(text.trim(), "✏️ <b>Your goal</b>");
    return true;
  }
}
