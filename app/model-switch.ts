import { UsageFailure } from "../core/errors/usage-failure.ts";
import { modelSpecs } from "../ai/model-specs.ts";
import { closest } from "../core/did-you-mean.ts";
import { readPrices } from "./run-cost.ts";
import type { Runtime } from "./runtime.ts";

// `/model NAME`, the same at the terminal's follow-up prompt and on the phone: which names
// are known here, which chain a name selects, and the words of the answer.

const PROVIDER_PREFIX = /^(groq|openrouter|local):/;

/** How to name a model that is not listed: with its provider, as `--model` takes it. */
const ANY_MODEL = "Any model your provider serves works as groq:NAME, openrouter:NAME or local:NAME.";

/**
 * The models a person can name here, as `provider:model` labels: those in use, the chain the
 * configuration selects, and every model the price table (telegram.prices) lists.
 */
function knownModels(runtime: Runtime, inUse: string[] = []): string[] {
  const configured = (override?: string): string[] => {
    try {
      return modelSpecs(runtime.env, override).map((spec) => spec.label);
    } catch {
      return [];
    }
  };
  return [
    ...new Set([
      ...inUse,
      ...configured(runtime.model),
      ...configured(),
      ...Object.keys(readPrices(runtime.pencilHome)),
    ]),
  ];
}

/**
 * What `/model NAME` selects, as `--model` would take it, and the chain of labels it gives. A name
 * with its provider (`groq:…`) is taken as given; a bare name must be a known model (or a known
 * model's id), since a typo is likelier than a model nobody configured. Throws UsageFailure,
 * with what to do, for an unknown name, a missing key or a malformed name; nothing changes then.
 */
function resolveModelName(runtime: Runtime, name: string, known: string[]): { model: string; labels: string[] } {
  let model = name.trim();
  if (!PROVIDER_PREFIX.test(model) && !known.includes(model)) {
    const byId = known.find((label) => label.slice(label.indexOf(":") + 1) === model);
    if (!byId) {
      const guess = closest(model, [...known, ...known.map((label) => label.slice(label.indexOf(":") + 1))]);
      throw new UsageFailure(`no model of that name is known here.${guess ? ` Did you mean ${guess}?` : ""}`);
    }
    model = byId;
  }
  return { model, labels: modelSpecs(runtime.env, model).map((spec) => spec.label) };
}

/** The outcome of one `/model` message: what to tell the person, and the model chosen (when it switched). */
export interface ModelAnswer {
  text: string;
  /** The `--model` value now in force; undefined when nothing changed. */
  switched?: string;
  /** False when the name could not be used. */
  ok: boolean;
}

/**
 * Answers `/model [NAME]`: without a name, the models in use and the known ones; with one, switches
 * through `apply` (given the name and its chain's labels, checked here; it returns the labels in force) or says
 * why it cannot, listing the known ones.
 */
export function answerModelCommand(
  runtime: Runtime,
  inUse: string[],
  name: string,
  apply: (model: string, labels: string[]) => string[],
): ModelAnswer {
  const known = knownModels(runtime, inUse);
  const list = `Known here: ${known.join(", ") || "none"}. ${ANY_MODEL}`;
  if (!name.trim()) return { ok: true, text: `Using ${inUse.join(" → ")}. Switch with /model NAME. ${list}` };
  try {
    const resolved = resolveModelName(runtime, name, known);
    const model = resolved.model;
    const labels = apply(model, resolved.labels);
    return { ok: true, switched: model, text: `Switched: the rest of this session uses ${labels.join(" → ")}.` };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { ok: false, text: `Cannot use ${name.trim()}: ${why} ${list}` };
  }
}
