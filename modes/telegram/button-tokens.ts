import { randomBytes } from "node:crypto";
import { readState, writeState } from "./state-file.ts";

/** What a button does once pressed. */
export type ButtonAction =
  | "diff"
  | "approve"
  | "reject"
  | "approve-all"
  | "approve-all-commit"
  | "reject-all"
  | "skip-reason"
  | "review"
  | "discard"
  | "cancel-run"
  | "allow"
  | "always"
  | "deny"
  | "plan-toggle"
  | "plan-all"
  | "plan-none"
  | "plan-proceed"
  | "undo"
  | "goal-run"
  | "goal-edit"
  | "goal-cancel"
  | "project"
  | "goal-continue"
  | "goal-review"
  | "goal-discard"
  | "rewind"
  | "hunks"
  | "hunk-keep"
  | "hunk-drop"
  | "apply-kept"
  | "command-output"
  | "dump-forwarded";

/**
 * What a token stands for, held on the server only: the action, the thing it acts
 * on (a card, question or plan id), the item within it (a file path, a step, "all"),
 * the digest of the exact content the button was shown for, and the owner it was
 * shown to. The callback data carries nothing but the token.
 */
export interface ButtonBinding {
  action: ButtonAction;
  subject: string;
  item: string;
  digest: string;
  owner: number;
  /** Milliseconds since the epoch. */
  issuedAt: number;
}

/** A binding found for a press, with its token (to revoke it once acted on). */
export interface ResolvedButton extends ButtonBinding {
  token: string;
}

/** Callback data is this prefix and a token; anything else is not ours. */
export const CALLBACK_PREFIX = "p1:";
const TOKEN_BYTES = 12;
const DATA_SHAPE = /^p1:[A-Za-z0-9_-]{16}$/;
/** Tokens held at most; the oldest go first. Settled cards revoke theirs, so this is only reached by neglect. */
const DEFAULT_MAX_TOKENS = 2000;

interface SavedTokens {
  version: 1;
  tokens: [string, ButtonBinding][];
  /** Tokens of settled cards, with what a press of one on a copy the bot never knew of answers. */
  retired?: [string, RetiredToken][];
}

/** A token of a settled card: what a press of it on another copy answers, and the copy the bot knew (message id). */
export interface RetiredToken {
  answer: string;
  messageId: number | null;
}

/** Retired tokens remembered at most; the oldest go first. */
const MAX_RETIRED = 2000;

/**
 * Short random tokens for inline buttons, mapped server-side to their bindings and
 * persisted (atomically) so an old card's buttons survive a restart. Looking a token
 * up never changes anything: a forged or replayed press cannot grow or alter what is held.
 */
export class ButtonTokens {
  private readonly map = new Map<string, ButtonBinding>();
  private readonly retired = new Map<string, RetiredToken>();

  constructor(
    /** Where tokens persist (`$PENCIL_HOME/telegram/tokens.json`); null keeps them in memory only. */
    private readonly file: string | null,
    private readonly max = DEFAULT_MAX_TOKENS,
    onBad?: (message: string) => void,
  ) {
    if (!file) return;
    const saved = readState<SavedTokens>(file, { version: 1, tokens: [] }, onBad);
    for (const entry of Array.isArray(saved.tokens) ? saved.tokens : []) {
      if (Array.isArray(entry) && typeof entry[0] === "string" && isBinding(entry[1])) this.map.set(entry[0], entry[1]);
    }
    for (const entry of Array.isArray(saved.retired) ? saved.retired : []) {
      const r = Array.isArray(entry) ? (entry[1] as RetiredToken) : null;
      if (typeof entry?.[0] === "string" && r && typeof r.answer === "string")
        this.retired.set(entry[0], {
          answer: r.answer,
          messageId: typeof r.messageId === "number" ? r.messageId : null,
        });
    }
    this.trim();
  }

  /** Issues one token per binding, saves once, and returns their callback data in order. */
  issue(bindings: Omit<ButtonBinding, "issuedAt">[]): string[] {
    const now = Date.now();
    const data = bindings.map((b) => {
      const token = randomBytes(TOKEN_BYTES).toString("base64url");
      this.map.set(token, { ...b, issuedAt: now });
      return CALLBACK_PREFIX + token;
    });
    this.trim();
    this.save();
    return data;
  }

  /** The binding behind callback data pressed by `fromId`, or null for malformed, unknown or foreign tokens. Pure. */
  resolve(data: string | undefined, fromId: number): ResolvedButton | null {
    if (typeof data !== "string" || !DATA_SHAPE.test(data)) return null;
    const token = data.slice(CALLBACK_PREFIX.length);
    const binding = this.map.get(token);
    if (!binding || binding.owner !== fromId) return null;
    return { ...binding, token };
  }

  /** Forgets the given tokens (a press acted once). */
  revoke(...tokens: string[]): void {
    let changed = false;
    for (const t of tokens) changed = this.map.delete(t) || changed;
    if (changed) this.save();
  }

  /** Forgets every token of a subject (a settled card, an answered question, a finished plan). */
  revokeSubject(subject: string, keep?: (binding: ButtonBinding) => boolean): void {
    if (this.forgetSubject(subject, keep)) this.save();
  }

  /**
   * Forgets `data`'s tokens (callback data) of a settled card whose known message is
   * `messageId`, and remembers what a later press of one on another copy of it (a card
   * sent again after a lost connection) answers; with `subject`, forgets every other token
   * of it too (revokeSubject), all in one save.
   */
  retire(data: string[], answer: string, messageId: number | null, subject?: string): void {
    for (const d of data) {
      if (!DATA_SHAPE.test(d)) continue;
      const token = d.slice(CALLBACK_PREFIX.length);
      this.map.delete(token);
      this.retired.set(token, { answer, messageId });
    }
    while (this.retired.size > MAX_RETIRED) this.retired.delete(this.retired.keys().next().value!);
    if (subject !== undefined) this.forgetSubject(subject);
    this.save();
  }

  /** What a press of a retired token answers, or null for a token never issued or forgotten. Pure. */
  retiredAnswer(data: string | undefined): RetiredToken | null {
    if (typeof data !== "string" || !DATA_SHAPE.test(data)) return null;
    return this.retired.get(data.slice(CALLBACK_PREFIX.length)) ?? null;
  }

  /** Tokens held. */
  get size(): number {
    return this.map.size;
  }

  /** Drops the subject's tokens (but those `keep` keeps) without saving; whether any went. */
  private forgetSubject(subject: string, keep?: (binding: ButtonBinding) => boolean): boolean {
    let changed = false;
    for (const [token, binding] of this.map) {
      if (binding.subject === subject && !keep?.(binding)) {
        this.map.delete(token);
        changed = true;
      }
    }
    return changed;
  }

  private trim(): void {
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }

  private save(): void {
    if (this.file)
      writeState(this.file, { version: 1, tokens: [...this.map], retired: [...this.retired] } satisfies SavedTokens);
  }
}

function isBinding(value: unknown): value is ButtonBinding {
  const b = value as ButtonBinding;
  return (
    typeof b === "object" &&
    b !== null &&
    typeof b.action === "string" &&
    typeof b.subject === "string" &&
    typeof b.item === "string" &&
    typeof b.digest === "string" &&
    typeof b.owner === "number" &&
    typeof b.issuedAt === "number"
  );
}
