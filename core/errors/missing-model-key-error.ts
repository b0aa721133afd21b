import { PencilError } from "./pencil-error.ts";
import { UsageFailure } from "./usage-failure.ts";

const MARKER = Symbol.for("pencil.error.MissingModelKeyError");

/** No key (or local server) is configured for the model that would be used (exit 2); names the variables to set. */
export class MissingModelKeyError extends UsageFailure {
  override name = "MissingModelKeyError";
  /** The environment variables that would fix it, in the order they are suggested. */
  readonly variables: string[];
  /** The isInstance marker. */
  readonly [MARKER] = true;

  constructor(message: string, variables: string[]) {
    super(message);
    this.variables = variables;
  }

  /** True for a MissingModelKeyError, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is MissingModelKeyError {
    return PencilError.hasMarker(error, MARKER);
  }
}
