import { PencilError } from "./pencil-error.ts";
import { UsageFailure } from "./usage-failure.ts";

const MARKER = Symbol.for("pencil.error.UnknownChangesetError");

/** An id (or prefix) that names no changeset, or several: a usage error, exit 2. */
export class UnknownChangesetError extends UsageFailure {
  override name = "UnknownChangesetError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for an UnknownChangesetError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is UnknownChangesetError {
    return PencilError.hasMarker(error, MARKER);
  }
}
