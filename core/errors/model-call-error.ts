import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.ModelCallError");

/** One failed try of one model within a call: which model, why, and whether it refused the request. */
export interface ModelAttempt {
  /** The model's label, e.g. `groq:openai/gpt-oss-120b`. */
  model: string;
  /** Short human reason, e.g. `HTTP 429: rate limit reached`. */
  reason: string;
  error: unknown;
}

/**
 * A model call that no model in the chain could answer: every model failed, or
 * one refused the request itself (a 4xx such as 400, which no fallback is asked
 * to repeat). The message names every model tried and why each failed.
 */
export class ModelCallError extends PencilError {
  override name = "ModelCallError";
  readonly attempts: ModelAttempt[];
  /** True when the last model refused the request (a client error), so it was not sent to a fallback. */
  readonly refused: boolean;
  /** The isInstance marker. */
  readonly [MARKER] = true;

  constructor(attempts: ModelAttempt[], refused: boolean) {
    super(describe(attempts, refused), { cause: attempts.at(-1)?.error });
    this.attempts = attempts;
    this.refused = refused;
  }

  /** True for a ModelCallError, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is ModelCallError {
    return PencilError.hasMarker(error, MARKER);
  }
}

function describe(attempts: ModelAttempt[], refused: boolean): string {
  const list = attempts.map((a) => `${a.model} (${a.reason})`).join("; ");
  if (refused) {
    const last = attempts.at(-1);
    return `${last?.model ?? "The model"} refused the request: ${last?.reason ?? "unknown error"}. It was not retried on a fallback model, which would refuse it too.${attempts.length > 1 ? ` Tried: ${list}.` : ""}`;
  }
  if (attempts.length === 1) {
    return `The model failed: ${list}. Try again later, or check its key and base URL.`;
  }
  return `Every model failed: ${list}. Try again later, or check the keys and base URLs of these providers.`;
}
