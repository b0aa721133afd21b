import type { Decision } from "../core/policy/policy.ts";

/** Token counts of one model call or a whole run. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/** What a session reports as it runs; both front ends render these and nothing else. */
export type SessionEvent =
  /** A request for step `step` went to the model: it is working, though nothing has come back yet. */
  | { type: "model-request"; step: number }
  | { type: "step-start"; step: number }
  | { type: "text"; delta: string }
  /** The model's reasoning (native, or a `<think>` block of its text): shown as thinking, never as the answer. */
  | { type: "thinking"; delta: string }
  | { type: "tool-call"; callId: string; tool: string; input: unknown }
  | {
      type: "policy";
      callId: string;
      tool: string;
      path: string;
      access: string;
      decision: Decision["decision"];
      reason: string;
      answeredBy?: "rule" | "user";
    }
  | { type: "tool-result"; callId: string; tool: string; ok: boolean; output: string; ms: number }
  | {
      type: "step-end";
      step: number;
      model: string;
      usage: TokenUsage;
      context: ContextMeter /** Dollars, when the provider reported the step's price. */;
      cost?: number;
    }
  /** A model call outside the tool loop (the intent check): counted in the run's tokens and cost, shown as no step. */
  | { type: "model-call"; purpose: string; model: string; usage: TokenUsage; cost?: number }
  | { type: "compacted"; results: number; chars: number }
  | { type: "model-fallback"; from: string; to: string; reason: string }
  | { type: "error"; message: string }
  /** Something the owner should know that does not stop the run (an MCP server left out). */
  | { type: "notice"; message: string };

/** How full the model's context window is: `used` tokens of `window`. */
export interface ContextMeter {
  used: number;
  window: number;
}

/** Receives session events; must not throw and must return quickly. */
export type EventSink = (event: SessionEvent) => void;

/** `ctx 1.3k/8.2k (16%)`: the context meter as shown in progress lines. */
export function formatContext(meter: ContextMeter): string {
  const pct = meter.window > 0 ? Math.round((meter.used / meter.window) * 100) : 0;
  return `ctx ${compact(meter.used)}/${compact(meter.window)} (${pct}%)`;
}

/** 1234 → 1.2k, 1234567 → 1.2M. */
export function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}
