import type { MiddlewareFn } from "grammy";
import type { Update } from "grammy/types";
import type { PencilContext } from "./context.ts";
import { readState, writeState } from "./state-file.ts";

/** Ids remembered of each kind; Telegram redelivers only updates from the last 24 hours, far fewer than this for one owner. */
const LEDGER_SIZE = 1000;

interface SavedLedger {
  version: 1;
  updates: number[];
  callbacks: string[];
}

/**
 * The updates the bot has taken in, persisted to `$PENCIL_HOME/telegram/updates.json`
 * (atomically) so a restarted bot does not act on them again. Telegram delivers an
 * update again when the getUpdates offset that confirms it never arrived (the bot was
 * killed while handling it, or the network lost the call), and can deliver one button
 * press as two updates; each press and message must act at most once. A set of recent
 * ids, not a high-water mark, because Telegram picks update ids at random after a week
 * without updates.
 */
export class UpdateLedger {
  private readonly updates = new Set<number>();
  private readonly callbacks = new Set<string>();

  constructor(
    /** Where the ledger persists; null keeps it in memory only. */
    private readonly file: string | null,
    onBad?: (message: string) => void,
    private readonly size = LEDGER_SIZE,
  ) {
    if (!file) return;
    const saved = readState<SavedLedger>(file, { version: 1, updates: [], callbacks: [] }, onBad);
    for (const id of Array.isArray(saved.updates) ? saved.updates : [])
      if (typeof id === "number") this.updates.add(id);
    for (const id of Array.isArray(saved.callbacks) ? saved.callbacks : [])
      if (typeof id === "string") this.callbacks.add(id);
  }

  /**
   * True the first time this update (and its button press) is seen, and records it —
   * on disk before returning, so a crash while handling it loses the update rather than
   * acting on it twice. False for a redelivered update or a press already taken in.
   */
  admit(update: Update): boolean {
    const callback = update.callback_query?.id;
    if (this.updates.has(update.update_id) || (callback !== undefined && this.callbacks.has(callback))) return false;
    remember(this.updates, update.update_id, this.size);
    if (callback !== undefined) remember(this.callbacks, callback, this.size);
    if (this.file)
      writeState(this.file, {
        version: 1,
        updates: [...this.updates],
        callbacks: [...this.callbacks],
      } satisfies SavedLedger);
    return true;
  }
}

function remember<T>(set: Set<T>, value: T, size: number): void {
  set.add(value);
  while (set.size > size) set.delete(set.values().next().value as T);
}

/** Middleware that lets each update through once: a redelivered update or a press seen before gets no action and no answer, and a log line. */
export function admitOnce(ledger: UpdateLedger, log: (line: string) => void): MiddlewareFn<PencilContext> {
  return async (ctx, next) => {
    if (ledger.admit(ctx.update)) return next();
    const press = ctx.callbackQuery ? ` (button press ${ctx.callbackQuery.id})` : "";
    log(`ignored update ${ctx.update.update_id}${press}: already taken in once`);
  };
}
