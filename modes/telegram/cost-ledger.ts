import { addUsage, type Price, type UsageByModel, usageLine } from "../../app/run-cost.ts";
import { readState, writeState } from "./state-file.ts";

interface SavedDays {
  version: 1;
  /** UTC date (YYYY-MM-DD) → runs and tokens per model. */
  days: Record<string, { runs: number; usage: UsageByModel }>;
}

/** Days kept in the ledger file. */
const DAYS_KEPT = 31;

/** Each day's runs and tokens (UTC days), kept in `$PENCIL_HOME/telegram/costs.json` for /status. */
export class CostLedger {
  private readonly saved: SavedDays;

  constructor(
    private readonly file: string | null,
    readonly prices: () => Record<string, Price>,
    onBad?: (message: string) => void,
  ) {
    const read = file ? readState<SavedDays>(file, { version: 1, days: {} }, onBad) : { version: 1 as const, days: {} };
    this.saved = read && typeof read.days === "object" && read.days !== null ? read : { version: 1, days: {} };
  }

  /** Adds a finished run's usage to today's totals. */
  add(usage: UsageByModel, now = new Date()): void {
    const day = (this.saved.days[now.toISOString().slice(0, 10)] ??= { runs: 0, usage: {} });
    day.runs += 1;
    for (const [model, u] of Object.entries(usage)) {
      addUsage((day.usage[model] ??= { inputTokens: 0, outputTokens: 0 }), u);
    }
    for (const old of Object.keys(this.saved.days).sort().slice(0, -DAYS_KEPT)) delete this.saved.days[old];
    if (this.file) writeState(this.file, this.saved);
  }

  /** Today's totals as one line of /status (plain text). */
  today(now = new Date()): string {
    const day = this.saved.days[now.toISOString().slice(0, 10)];
    if (!day) return "Today: no runs yet.";
    return `Today: ${day.runs} ${day.runs === 1 ? "run" : "runs"} · ${usageLine(day.usage, this.prices())}`;
  }
}
