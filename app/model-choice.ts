import type { LanguageModel } from "ai";
import type { EventSink } from "../agent/events.ts";
import { contextWindowOf } from "../ai/model-specs.ts";
import { resolveModels } from "../ai/resolve-models.ts";
import type { Runtime } from "./runtime.ts";

/** The model a run uses: one LanguageModel (fallback inside), its chain's labels, and the label of the model in use. */
export interface ModelChoice {
  model: LanguageModel;
  labels: string[];
  current(): string;
  /** Context window in tokens. */
  contextWindow: number;
}

/**
 * Builds the model chain from the runtime's environment (throws MissingModelKeyError
 * → exit 2). Fallback switches are forwarded to whichever sink is current.
 */
export function chooseModels(runtime: Runtime, sink: { emit: EventSink }): ModelChoice {
  let current = "";
  const resolved = resolveModels(runtime.env, {
    ...(runtime.model ? { model: runtime.model } : {}),
    onModelUsed: (label) => {
      current = label;
    },
    onFallback: (event) => sink.emit({ type: "model-fallback", ...event }),
  });
  current = resolved.labels[0] ?? "";
  return {
    model: resolved.model,
    labels: resolved.labels,
    current: () => current,
    // The smallest window of the chain: a step the fallback serves must fit too.
    contextWindow: Math.min(
      ...resolved.specs.map((spec) => contextWindowOf(spec, runtime.env)),
      contextWindowOf(undefined, runtime.env),
    ),
  };
}

/** The models of one run: the given choice, or the runtime's chain built on first use; `/model` switches them. */
export class RunModels {
  private chosen: ModelChoice | undefined;

  constructor(
    private readonly runtime: Runtime,
    private readonly given: { models?: ModelChoice; model?: string },
    private readonly sink: { emit: EventSink },
  ) {}

  /** The models, built on first use so reopening a changeset needs no key until the agent really runs. */
  get choice(): ModelChoice {
    this.chosen ??=
      this.given.models ??
      chooseModels(this.given.model ? { ...this.runtime, model: this.given.model } : this.runtime, this.sink);
    return this.chosen;
  }

  /** Switches to NAME as `--model` takes it; throws the model configuration's own error and changes nothing then. */
  switchTo(name: string): string[] {
    const chosen = chooseModels({ ...this.runtime, model: name }, this.sink);
    this.chosen = chosen;
    return chosen.labels;
  }
}
