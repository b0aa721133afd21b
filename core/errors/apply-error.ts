import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.ApplyError");

/** An apply that could not run (bad approval list, malformed changeset) or failed mid-way; the message says what to do. */
export class ApplyError extends PencilError {
  override name = "ApplyError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for an ApplyError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is ApplyError {
    return PencilError.hasMarker(error, MARKER);
  }
}
