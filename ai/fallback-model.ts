import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
} from "@ai-sdk/provider";
import { type ModelAttempt, ModelCallError } from "../core/errors/model-call-error.ts";
import { ModelTimeoutError } from "../core/errors/model-timeout-error.ts";
import { classifyFailure, describeFailure, type FailureVerdict } from "./failure.ts";
import { withModelLabel } from "./model-label.ts";

/** One model of a fallback chain, with the label it is shown and recorded under (`provider:model-id`). */
export interface ModelEntry {
  label: string;
  model: LanguageModelV4;
}

/** A switch from a failed model to the next one, reported as it happens. */
export interface FallbackEvent {
  from: string;
  to: string;
  /** Why `from` failed, e.g. `HTTP 429: rate limit reached`. */
  reason: string;
}

/** Tuning and observation of a fallback chain; every field is optional. */
export interface FallbackOptions {
  /** Called once per model call, with the label of the model whose output is passed on, before any of that output is. */
  onModelUsed?: (label: string) => void;
  /** Called each time a model failed and the call moves on to the next one. */
  onFallback?: (event: FallbackEvent) => void;
  /** Longest wait for a streaming model's first part, from the request on (default 60 s). */
  firstByteTimeoutMs?: number;
  /** Longest silence tolerated between two parts of a stream (default 60 s). */
  idleTimeoutMs?: number;
  /** Longest time one model may take for a whole step, streamed or not (default 600 s). */
  stepTimeoutMs?: number;
  /** After a model failed, later calls try the others first for this long (default 30 s); 0 disables. */
  cooldownMs?: number;
  /** Clock, for the cooldown. */
  now?: () => number;
}

type Part = LanguageModelV4StreamPart;

/** A model stream that is open: which model, its stream, and the abort of its request. */
interface OpenStream {
  index: number;
  entry: ModelEntry;
  result: LanguageModelV4StreamResult;
  abort: (reason?: unknown) => void;
  /** When the request was sent (Date.now()), for the first-byte and step timeouts. */
  startedAt: number;
  /** True once the stream delivered its first part from the model (not the client's own `stream-start`). */
  started: boolean;
}

/**
 * A language model that tries the models of a chain in order, so no call site
 * retries. It moves to the next model on 429, 5xx, timeouts, connection errors
 * and streams that break before the step finished (so before any of its tools
 * ran: the SDK runs them once the step's stream has ended); then the step is
 * issued again, whole, to the next model. A client error (400 and other 4xx) is
 * not sent to a fallback, which would refuse it too. A streamed step is held back
 * until its finish when a fallback remains, so that a discarded attempt leaves
 * nothing in the step.
 * Each step's finish carries `providerMetadata.pencil.model`, the label of the
 * model that produced it (see `modelLabelOf`).
 */
export class FallbackModel implements LanguageModelV4 {
  readonly specificationVersion = "v4";
  readonly provider = "pencil";
  /** The label of the primary model. */
  readonly modelId: string;
  readonly chain: readonly ModelEntry[];
  private readonly options: FallbackOptions;
  private readonly coolingUntil = new Map<string, number>();

  constructor(chain: ModelEntry[], options: FallbackOptions = {}) {
    if (chain.length === 0) throw new Error("A fallback chain needs at least one model.");
    this.chain = chain;
    this.options = options;
    this.modelId = chain[0]!.label;
  }

  get supportedUrls(): LanguageModelV4["supportedUrls"] {
    return this.chain[0]!.model.supportedUrls;
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const order = this.order();
    const attempts: ModelAttempt[] = [];
    for (let i = 0; i < order.length; i++) {
      const entry = order[i]!;
      const attempt = attemptSignal(options.abortSignal);
      try {
        const timeout = this.stepMs();
        const result = await withTimeout(
          entry.model.doGenerate({ ...options, abortSignal: attempt.signal }),
          timeout,
          attempt.abort,
          () => `${entry.label} did not answer within ${timeout} ms (the step timeout)`,
        );
        this.coolingUntil.delete(entry.label);
        this.options.onModelUsed?.(entry.label);
        return { ...result, providerMetadata: withModelLabel(result.providerMetadata, entry.label) };
      } catch (error) {
        attempt.abort();
        this.judge(error, entry, order[i + 1], attempts, options.abortSignal);
      }
    }
    throw new ModelCallError(attempts, false);
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const order = this.order();
    const attempts: ModelAttempt[] = [];
    const first = await this.open(order, 0, attempts, options);
    return { ...first.result, stream: this.relay(order, first, attempts, options) };
  }

  private stepMs(): number {
    return this.options.stepTimeoutMs ?? 600_000;
  }

  /** The chain with models cooling down after a failure moved to the end (still tried, as a last resort). */
  private order(): ModelEntry[] {
    const now = (this.options.now ?? Date.now)();
    const ready = this.chain.filter((e) => (this.coolingUntil.get(e.label) ?? 0) <= now);
    const cooling = this.chain.filter((e) => (this.coolingUntil.get(e.label) ?? 0) > now);
    return [...ready, ...cooling];
  }

  /** Records a failed attempt (cooling its model down when it may recover) and returns the verdict on it. */
  private record(
    error: unknown,
    entry: ModelEntry,
    attempts: ModelAttempt[],
    callerSignal?: AbortSignal,
  ): FailureVerdict {
    const verdict = classifyFailure(error, callerSignal);
    if (verdict === "aborted") return verdict;
    attempts.push({ model: entry.label, reason: describeFailure(error), error });
    const cooldown = this.options.cooldownMs ?? 30_000;
    if (verdict === "fallback" && cooldown > 0)
      this.coolingUntil.set(entry.label, (this.options.now ?? Date.now)() + cooldown);
    return verdict;
  }

  /** Records a failed attempt; throws when the call must stop here (abort, refusal), else reports the move to `next`. */
  private judge(
    error: unknown,
    entry: ModelEntry,
    next: ModelEntry | undefined,
    attempts: ModelAttempt[],
    callerSignal?: AbortSignal,
  ): void {
    const verdict = this.record(error, entry, attempts, callerSignal);
    if (verdict === "aborted") throw error;
    if (verdict === "refused") throw new ModelCallError(attempts, true);
    if (next) this.options.onFallback?.({ from: entry.label, to: next.label, reason: attempts.at(-1)!.reason });
  }

  /** Opens a stream on the first model from `start` on that answers; throws ModelCallError when none does. */
  private async open(
    order: ModelEntry[],
    start: number,
    attempts: ModelAttempt[],
    options: LanguageModelV4CallOptions,
  ): Promise<OpenStream> {
    const firstByte = this.options.firstByteTimeoutMs ?? 60_000;
    for (let i = start; i < order.length; i++) {
      const entry = order[i]!;
      const attempt = attemptSignal(options.abortSignal);
      const startedAt = Date.now();
      try {
        const timeout = Math.min(firstByte, this.stepMs());
        const result = await withTimeout(
          entry.model.doStream({ ...options, abortSignal: attempt.signal }),
          timeout,
          attempt.abort,
          () => `${entry.label} sent no first byte within ${timeout} ms`,
        );
        return { index: i, entry, result, abort: attempt.abort, startedAt, started: false };
      } catch (error) {
        attempt.abort();
        this.judge(error, entry, order[i + 1], attempts, options.abortSignal);
      }
    }
    throw new ModelCallError(attempts, false);
  }

  /** The stream passed to the caller: the open model's parts, held back while a fallback could still replace them. */
  private relay(
    order: ModelEntry[],
    first: OpenStream,
    attempts: ModelAttempt[],
    options: LanguageModelV4CallOptions,
  ): ReadableStream<Part> {
    const firstByte = this.options.firstByteTimeoutMs ?? 60_000;
    const idle = this.options.idleTimeoutMs ?? 60_000;
    const step = this.stepMs();
    /** How long the next read may take, and what to say when it takes longer: the nearest of the three deadlines. */
    const nextWait = (): [number, string] => {
      const label = current.entry.label;
      const stepLeft = current.startedAt + step - Date.now();
      const [ms, why] = current.started
        ? [idle, `${label} sent nothing for ${idle} ms`]
        : [current.startedAt + firstByte - Date.now(), `${label} sent no first byte within ${firstByte} ms`];
      return stepLeft < ms
        ? [Math.max(1, stepLeft), `${label} did not finish the step within ${step} ms`]
        : [Math.max(1, ms), why];
    };
    let current = first;
    let reader = current.result.stream.getReader();
    let held: Part[] = [];
    let committed = false;
    let cancelled = false;

    /** Passes on the held parts, and from now on every part as it comes; announces the model the first time. */
    const commit = (controller: ReadableStreamDefaultController<Part>) => {
      if (!committed) this.options.onModelUsed?.(current.entry.label);
      committed = true;
      for (const part of held) controller.enqueue(part);
      held = [];
    };
    const startOn = (controller: ReadableStreamDefaultController<Part>, open: OpenStream) => {
      current = open;
      reader = open.result.stream.getReader();
      held = [];
      committed = false;
      // With no model left to fall back on there is nothing to hold back for.
      if (open.index === order.length - 1) commit(controller);
    };

    /** Handles a failure of the current model; returns true when the step goes on with the next model. */
    const fail = async (controller: ReadableStreamDefaultController<Part>, error: unknown): Promise<boolean> => {
      current.abort();
      void reader.cancel().catch(() => {});
      const verdict = this.record(error, current.entry, attempts, options.abortSignal);
      if (verdict === "aborted") {
        controller.error(error);
        return false;
      }
      const next = order[current.index + 1];
      if (committed || verdict === "refused" || next === undefined) {
        commit(controller);
        controller.enqueue({ type: "error", error: new ModelCallError(attempts, verdict === "refused") });
        controller.close();
        return false;
      }
      this.options.onFallback?.({ from: current.entry.label, to: next.label, reason: attempts.at(-1)!.reason });
      try {
        const opened = await this.open(order, current.index + 1, attempts, options);
        if (cancelled) {
          opened.abort();
          return false;
        }
        startOn(controller, opened);
        return true;
      } catch (final) {
        if (classifyFailure(final, options.abortSignal) === "aborted") controller.error(final);
        else {
          controller.enqueue({ type: "error", error: final });
          controller.close();
        }
        return false;
      }
    };

    return new ReadableStream<Part>({
      start: (controller) => {
        if (current.index === order.length - 1) commit(controller);
      },
      pull: async (controller) => {
        // Reads until something was passed on or the stream is over, so each pull makes progress.
        while (!cancelled) {
          const [wait, why] = nextWait();
          const next = await withTimeout(reader.read(), wait, current.abort, () => why).catch(
            (error: unknown) => ({ failed: error }) as const,
          );
          if ("failed" in next) {
            if (await fail(controller, next.failed)) continue;
            return;
          }
          if (next.done) {
            if (committed) {
              controller.close();
              return;
            }
            if (await fail(controller, new Error(`${current.entry.label} ended its stream without finishing the step`)))
              continue;
            return;
          }
          const part = next.value;
          // The client makes `stream-start` itself as soon as the headers arrive; the model's first byte is what follows.
          if (part.type !== "stream-start") current.started = true;
          if (part.type === "error") {
            if (await fail(controller, part.error)) continue;
            return;
          }
          if (part.type === "finish") {
            if (!committed && (part.finishReason.unified === "error" || part.finishReason.unified === "interrupted")) {
              if (
                await fail(
                  controller,
                  new Error(`${current.entry.label} stopped mid-step (finish reason: ${part.finishReason.unified})`),
                )
              )
                continue;
              return;
            }
            this.coolingUntil.delete(current.entry.label);
            held.push({ ...part, providerMetadata: withModelLabel(part.providerMetadata, current.entry.label) });
          } else {
            held.push(part);
          }
          // Everything is held until the step's finish, tool calls included: the SDK runs a step's tools only
          // after its stream ends, so until then no tool has run and the step can still be issued again, whole
          // (OpenRouter's client passes a tool call on as soon as its arguments are complete, mid-stream).
          if (committed || part.type === "finish") {
            commit(controller);
            return;
          }
        }
      },
      cancel: async (reason) => {
        cancelled = true;
        current.abort(reason);
        await reader.cancel(reason).catch(() => {});
      },
    });
  }
}

/** An abort signal for one attempt: aborted by the caller's signal or by `abort` (timeouts, failures). */
function attemptSignal(caller: AbortSignal | undefined): { signal: AbortSignal; abort: (reason?: unknown) => void } {
  const own = new AbortController();
  return { signal: caller ? AbortSignal.any([caller, own.signal]) : own.signal, abort: (reason) => own.abort(reason) };
}

/** Resolves like `promise`, or rejects with ModelTimeoutError (after calling `onTimeout`) when it takes longer than `ms`. */
function withTimeout<T>(
  promise: PromiseLike<T>,
  ms: number,
  onTimeout: (reason: unknown) => void,
  message: () => string,
): Promise<T> {
  if (!(ms > 0) || !Number.isFinite(ms)) return Promise.resolve(promise);
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const error = new ModelTimeoutError(message());
      onTimeout(error);
      reject(error);
    }, ms);
    Promise.resolve(promise).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
