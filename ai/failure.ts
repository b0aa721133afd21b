import { ModelTimeoutError } from "../core/errors/model-timeout-error.ts";

/** What to do after a model failed: try the next model, give up because the request itself was refused, or stop because the caller aborted. */
export type FailureVerdict = "fallback" | "refused" | "aborted";

/**
 * Judges a model failure. A client error (4xx other than 408 and 429) means the
 * request itself is wrong, and a fallback model would refuse it too; an abort by
 * the caller is not a failure of the model. Everything else (429, 5xx, timeouts,
 * refused or cut connections, broken streams) is worth a try on the next model.
 */
export function classifyFailure(error: unknown, callerSignal?: AbortSignal): FailureVerdict {
  if (callerSignal?.aborted) return "aborted";
  if (ModelTimeoutError.isInstance(error)) return "fallback";
  const status = statusOf(error);
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) return "refused";
  return "fallback";
}

/** The HTTP status carried by a provider error (APICallError, in-stream error objects), if any. */
function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const record = error as { statusCode?: unknown; code?: unknown };
  if (typeof record.statusCode === "number") return record.statusCode;
  // OpenRouter's in-stream errors carry the upstream status as a numeric `code`.
  if (typeof record.code === "number" && record.code >= 100 && record.code < 600) return record.code;
  return undefined;
}

/** A one-line reason for a failure, e.g. `HTTP 429: rate limit reached`, for messages and logs. */
export function describeFailure(error: unknown): string {
  const status = statusOf(error);
  const message = messageOf(error);
  if (status !== undefined && status >= 400) return `HTTP ${status}: ${message}`;
  return message;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const causeText =
      cause instanceof Error
        ? cause.message
        : typeof cause === "object" && cause !== null && "code" in cause
          ? String((cause as { code: unknown }).code)
          : "";
    return causeText && !error.message.includes(causeText) ? `${error.message} (${causeText})` : error.message;
  }
  if (typeof error === "object" && error !== null && "message" in error)
    return String((error as { message: unknown }).message);
  return String(error);
}
