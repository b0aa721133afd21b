import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.SessionFileError");

/** A session file that cannot be used as it is; says which file and what to do. Nothing was overwritten. */
export class SessionFileError extends PencilError {
  override name = "SessionFileError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a SessionFileError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is SessionFileError {
    return PencilError.hasMarker(error, MARKER);
  }
}
