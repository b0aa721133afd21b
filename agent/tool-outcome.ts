import type { ToolResultPart } from "ai";

/**
 * What a guarded tool call answers: `text` is exactly what the model reads; `ok`
 * false marks a failure, which reaches the provider as the SDK's error output
 * (`error-text`), so the model is told the call failed by the protocol too.
 */
export interface ToolOutcome {
  ok: boolean;
  text: string;
}

/** A successful call's answer. */
export function toolSuccess(text: string): ToolOutcome {
  return { ok: true, text };
}

/** A failed call's answer: `message` says what went wrong and what to do next; the model reads it after "Error: ". */
export function toolFailure(message: string): ToolOutcome {
  return { ok: false, text: `Error: ${message}` };
}

/** The tool result the provider sends for an outcome (the AI SDK's `toModelOutput`). */
export function toModelOutput(outcome: ToolOutcome): ToolResultPart["output"] {
  return outcome.ok ? { type: "text", value: outcome.text } : { type: "error-text", value: outcome.text };
}
