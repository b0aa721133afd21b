import { PencilError } from "./pencil-error.ts";
import { UsageFailure } from "./usage-failure.ts";

const MARKER = Symbol.for("pencil.error.UnknownSessionError");

/** A session id that matches no session (exit 2); `known` lists the ones that exist. */
export class UnknownSessionError extends UsageFailure {
  override name = "UnknownSessionError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  constructor(
    message: string,
    readonly known: string[],
  ) {
    super(message);
  }

  /** True for an UnknownSessionError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is UnknownSessionError {
    return PencilError.hasMarker(error, MARKER);
  }
}
