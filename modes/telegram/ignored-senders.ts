import { join } from "node:path";
import { readState, writeState } from "./state-file.ts";

/** One account the bot ignored: who, how often, and when last (what `pencil doctor` explains). */
export interface IgnoredSender {
  id: number;
  firstName?: string;
  username?: string;
  count: number;
  /** ISO time of the latest ignored update. */
  last: string;
}

/** How many senders the file remembers (the most recent ones). */
const KEPT = 20;
/** Writes are gathered: a flood of forged updates costs one write a second at most. */
const FLUSH_MS = 1000;

/** Where the bot keeps the senders it ignored, under `$PENCIL_HOME`. */
function ignoredSendersFile(pencilHome: string): string {
  return join(pencilHome, "telegram", "ignored-senders.json");
}

/** The senders the bot ignored, most recent first (empty when none or the file is unreadable). */
export function readIgnoredSenders(pencilHome: string): IgnoredSender[] {
  const list = readState<unknown>(ignoredSendersFile(pencilHome), []);
  return Array.isArray(list) ? (list as IgnoredSender[]).filter((s) => Number.isSafeInteger(s?.id)) : [];
}

/**
 * Remembers who wrote to the bot and was ignored, so that a wrong TELEGRAM_OWNER_ID
 * (the bot silent for its real owner) can be explained by `pencil doctor`.
 */
export class IgnoredSenders {
  private readonly senders: IgnoredSender[];
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly pencilHome: string) {
    this.senders = readIgnoredSenders(pencilHome);
  }

  /** Counts one ignored update from `from`. */
  note(from: { id: number; first_name?: string; username?: string }): void {
    const at = this.senders.findIndex((s) => s.id === from.id);
    const previous = at === -1 ? undefined : this.senders.splice(at, 1)[0];
    this.senders.unshift({
      id: from.id,
      ...(from.first_name ? { firstName: from.first_name.slice(0, 64) } : {}),
      ...(from.username ? { username: from.username.slice(0, 64) } : {}),
      count: (previous?.count ?? 0) + 1,
      last: new Date().toISOString(),
    });
    this.senders.splice(KEPT);
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
    this.timer.unref?.();
  }

  /** Writes what was noted (also called when the bot stops). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    try {
      writeState(ignoredSendersFile(this.pencilHome), this.senders);
    } catch {
      // A diagnostic only: failing to record it must not stop the bot's guard.
    }
  }
}
