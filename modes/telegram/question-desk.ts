import { forPerson } from "../../render/person-text.ts";
import { randomBytes } from "node:crypto";
import type { Approver, PermissionAnswer, PermissionQuestion } from "../../core/policy/approver.ts";
import { sha256 } from "../../core/hash.ts";
import type { ButtonTokens, ResolvedButton } from "./button-tokens.ts";
import { escapeHtml } from "./html.ts";
import type { Outbox } from "./outbox.ts";
import { visible } from "../../render/visible-text.ts";

/** How long a question waits for the owner before it counts as Deny (default). */
const DEFAULT_QUESTION_TIMEOUT_MS = 120_000;

interface Waiting {
  digest: string;
  messageId: number | null;
  text: string;
  settle: (answer: PermissionAnswer, verdict: string) => void;
}

/** Characters of a question's subject shown on the phone; a longer one can only be denied there. */
const SUBJECT_ROOM = 1500;

const ANSWERS = {
  allow: { kind: "yes" },
  always: { kind: "always" },
  deny: { kind: "no", reason: "The owner tapped Deny." },
} as const;

/**
 * Permission questions asked during a run, as messages with Allow / Always / Deny
 * buttons bound to the question (tokens, like the card's). No answer within the
 * timeout, or the run being cancelled, means Deny; the run then goes on with it.
 */
export class QuestionDesk {
  private readonly waiting = new Map<string, Waiting>();

  constructor(
    private readonly outbox: Outbox,
    private readonly tokens: ButtonTokens,
    private readonly ownerId: number,
    private readonly timeoutMs = DEFAULT_QUESTION_TIMEOUT_MS,
  ) {}

  /** An Approver that asks the owner through this desk. */
  approver(): Approver {
    return { ask: (question, signal) => this.ask(question, signal) };
  }

  /** Questions waiting for an answer. */
  get size(): number {
    return this.waiting.size;
  }

  /** Applies a pressed Allow / Always / Deny; returns the text to answer the press with. */
  async answer(button: ResolvedButton): Promise<string> {
    const waiting = this.waiting.get(button.subject);
    if (!waiting || waiting.digest !== button.digest || !(button.action in ANSWERS))
      return "This question is no longer pending.";
    const action = button.action as keyof typeof ANSWERS;
    waiting.settle(
      ANSWERS[action],
      action === "deny" ? "⛔ Denied" : action === "always" ? "✅ Allowed for the rest of this run" : "✅ Allowed once",
    );
    return action === "deny" ? "Denied." : "Allowed.";
  }

  private async ask(question: PermissionQuestion, signal?: AbortSignal): Promise<PermissionAnswer> {
    if (signal?.aborted) return { kind: "no", reason: "The run was cancelled." };
    const id = `q-${randomBytes(6).toString("hex")}`;
    const digest = sha256(JSON.stringify(question));
    const seconds = Math.round(this.timeoutMs / 1000);
    // What the owner allows must be what the owner sees: control and bidi characters are escaped,
    // and a subject too long for one message can only be denied here.
    const subject = visible(question.subject);
    const whole = subject.length <= SUBJECT_ROOM;
    const text =
      `❓ <b>The agent asks to ${escapeHtml(question.access)}</b> (${escapeHtml(question.tool)}):\n<code>${escapeHtml(clip(subject, SUBJECT_ROOM))}</code>\n` +
      // Policy reasons are written for the model; the owner reads the fact (a send question's reason is already theirs).
      `<i>${escapeHtml(clip(visible(question.access === "send" ? question.reason : forPerson(question.reason)), 800))}</i>\n` +
      (whole
        ? `No answer within ${seconds} s counts as Deny.`
        : "Too long to show whole here, so it can only be denied from the phone; run it from the terminal to allow it.");
    const [allow, always, deny] = this.tokens.issue(
      (["allow", "always", "deny"] as const).map((action) => ({
        action,
        subject: id,
        item: "question",
        digest,
        owner: this.ownerId,
      })),
    );
    return new Promise<PermissionAnswer>((resolve) => {
      let done = false;
      let shown = "";
      const settle = (answer: PermissionAnswer, verdict: string) => {
        if (done) return;
        done = true;
        shown = verdict;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        const w = this.waiting.get(id);
        this.waiting.delete(id);
        this.tokens.revokeSubject(id);
        resolve(answer);
        if (w?.messageId)
          void this.outbox.edit(this.ownerId, w.messageId, `${w.text}\n\n<b>${escapeHtml(verdict)}</b>`);
      };
      const onAbort = () => settle({ kind: "no", reason: "The run was cancelled." }, "⏹ Run cancelled: denied");
      const timer = setTimeout(
        () =>
          settle(
            { kind: "no", reason: `No answer from the owner within ${seconds} s.` },
            `⏱ No answer within ${seconds} s: denied`,
          ),
        this.timeoutMs,
      );
      signal?.addEventListener("abort", onAbort, { once: true });
      const waiting: Waiting = { digest, messageId: null, text, settle };
      this.waiting.set(id, waiting);
      this.outbox
        .send(this.ownerId, text, {
          // A question that may only cover this one call (a command with no sandbox) gets no "always".
          inline_keyboard: [
            !whole
              ? [{ text: "⛔ Deny", callback_data: deny! }]
              : question.once
                ? [
                    { text: "✅ Allow", callback_data: allow! },
                    { text: "⛔ Deny", callback_data: deny! },
                  ]
                : [
                    { text: "✅ Allow", callback_data: allow! },
                    { text: "Allow always", callback_data: always! },
                    { text: "⛔ Deny", callback_data: deny! },
                  ],
          ],
        })
        .then((msg) => {
          waiting.messageId = msg.message_id;
          if (done) void this.outbox.edit(this.ownerId, msg.message_id, `${text}\n\n<b>${escapeHtml(shown)}</b>`);
        })
        .catch(() =>
          settle({ kind: "no", reason: "The question could not be delivered to the owner." }, "undelivered"),
        );
    });
  }
}

/** Text cut to `max` characters, saying how much was left out. */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (+${text.length - max} characters)`;
}
