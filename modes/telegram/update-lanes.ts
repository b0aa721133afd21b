import { BotError, type MiddlewareFn } from "grammy";
import type { ButtonAction, ButtonTokens } from "./button-tokens.ts";
import type { PencilContext } from "./context.ts";

/** Presses that decide changesets or write the workspace (review cards, offers, undo): one lane, so they never interleave. */
const REVIEW_ACTIONS: ReadonlySet<ButtonAction> = new Set([
  "diff",
  "approve",
  "reject",
  "approve-all",
  "reject-all",
  "skip-reason",
  "review",
  "discard",
  "undo",
]);

/**
 * Handles updates off grammY's polling loop, each in its lane and in order within it:
 * messages; review presses (and undo); the presses of each question, plan or run on their own.
 * grammY handles one update at a time, and a handler whose send waits out a 429
 * (retry_after can be many seconds) would hold every update behind it: now it holds
 * only its own lane — an Allow, a Cancel, a press behind a slow reply still act at
 * once. Each update was admitted once before it gets here (the ledger), so handing
 * it on before it is handled loses nothing a restart would have replayed.
 */
export class UpdateLanes {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly tokens: ButtonTokens,
    /** Where a handler's error goes (the bot's error boundary). */
    private readonly onError: (error: BotError<PencilContext>) => Promise<void> | void,
  ) {}

  /** The middleware: queues the rest of the chain in the update's lane and returns at once. */
  middleware(): MiddlewareFn<PencilContext> {
    return (ctx, next) => {
      const lane = this.laneOf(ctx);
      const run = (this.tails.get(lane) ?? Promise.resolve())
        .then(() => next())
        .catch((error) => this.onError(new BotError(error, ctx)))
        .catch(() => {});
      this.tails.set(lane, run);
      this.running.add(run);
      void run.finally(() => {
        this.running.delete(run);
        if (this.tails.get(lane) === run) this.tails.delete(lane);
      });
      return Promise.resolve();
    };
  }

  /** Resolves once no update is being handled (the bot is stopping). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  private laneOf(ctx: PencilContext): string {
    const query = ctx.callbackQuery;
    if (!query) return "messages";
    const button = this.tokens.resolve(query.data, query.from.id);
    if (!button) return "unknown presses";
    return REVIEW_ACTIONS.has(button.action) ? "review" : `buttons of ${button.subject}`;
  }
}
