import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.PatternError");

/** A search pattern that cannot be used; the message says why and what to write instead. */
export class PatternError extends PencilError {
  override name = "PatternError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a PatternError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is PatternError {
    return PencilError.hasMarker(error, MARKER);
  }
}
