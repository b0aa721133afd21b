import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { compact, type SessionEvent, type TokenUsage } from "../agent/events.ts";

// What a run costs: the owner's price table, the dollars a provider reported, and the
// tokens per model — for the terminal's footer and the phone's alike.

/** A model's price in US dollars per million tokens, as the user configured it. */
export interface Price {
  input: number;
  output: number;
}

/** One model's tokens over some steps, and the dollars its provider reported (for `reportedSteps` of `steps`). */
export interface ModelUsage extends TokenUsage {
  steps?: number;
  reportedSteps?: number;
  reportedCost?: number;
}

/** Tokens (and reported prices) per model of one run or one day. */
export type UsageByModel = Record<string, ModelUsage>;

const PriceSchema = z.object({ input: z.number().nonnegative(), output: z.number().nonnegative() });
const PricesSchema = z.looseObject({
  telegram: z.looseObject({ prices: z.record(z.string(), PriceSchema).optional() }).optional(),
});

/**
 * Reads `telegram.prices` (`provider:model` → `{input, output}` dollars per million
 * tokens) from the user's own `$PENCIL_HOME/settings.json`; none when absent or malformed.
 */
export function readPrices(pencilHome: string): Record<string, Price> {
  try {
    const parsed = PricesSchema.safeParse(JSON.parse(readFileSync(join(pencilHome, "settings.json"), "utf8")));
    return parsed.success ? (parsed.data.telegram?.prices ?? {}) : {};
  } catch {
    return {};
  }
}

/**
 * The cost of some usage in dollars: the user's price for a model when set, else
 * what its provider reported for every one of its steps; null when some model has neither.
 */
export function costOf(usage: UsageByModel, prices: Record<string, Price>): number | null {
  let total = 0;
  for (const [model, u] of Object.entries(usage)) {
    // A model on the owner's own server costs nothing per token.
    if (model.startsWith("local:")) continue;
    const price = Object.hasOwn(prices, model) ? prices[model] : undefined;
    if (price) total += (u.inputTokens * price.input + u.outputTokens * price.output) / 1_000_000;
    else if (u.steps && u.reportedSteps === u.steps) total += u.reportedCost ?? 0;
    else return null;
  }
  return total;
}

/** Adds `u` into `into` (tokens, steps and reported dollars). */
export function addUsage(into: ModelUsage, u: ModelUsage): void {
  into.inputTokens += u.inputTokens;
  into.outputTokens += u.outputTokens;
  into.steps = (into.steps ?? 0) + (u.steps ?? 0);
  into.reportedSteps = (into.reportedSteps ?? 0) + (u.reportedSteps ?? 0);
  into.reportedCost = (into.reportedCost ?? 0) + (u.reportedCost ?? 0);
}

/** `$0.0123`, with enough digits that a cheap run does not read as free. */
export function formatDollars(dollars: number): string {
  return dollars >= 1
    ? `$${dollars.toFixed(2)}`
    : `$${dollars
        .toPrecision(2)
        .replace(/(\.\d*?)0+$/, "$1")
        .replace(/\.$/, "")}`;
}

/** Tokens per model of one run, counted from its step-end events and its model calls outside the loop (the intent check). */
export class RunMeter {
  readonly usage: UsageByModel = {};

  /** Feed it every event of the run. */
  readonly sink = (event: SessionEvent): void => {
    if (event.type !== "step-end" && event.type !== "model-call") return;
    const u = (this.usage[event.model] ??= { inputTokens: 0, outputTokens: 0 });
    addUsage(u, {
      ...event.usage,
      steps: 1,
      reportedSteps: event.cost === undefined ? 0 : 1,
      reportedCost: event.cost ?? 0,
    });
  };
}

/** Usage as one line: `groq:x · 1.2k in / 340 out · $0.0004` (cost only when every model has a price). */
export function usageLine(usage: UsageByModel, prices: Record<string, Price>): string {
  const models = Object.keys(usage);
  const input = Object.values(usage).reduce((n, u) => n + u.inputTokens, 0);
  const output = Object.values(usage).reduce((n, u) => n + u.outputTokens, 0);
  const cost = models.length ? costOf(usage, prices) : 0;
  return [
    models.join(", ") || "no model call",
    `${compact(input)} in / ${compact(output)} out`,
    cost === null ? "cost: no price set" : formatDollars(cost),
  ].join(" · ");
}
