import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.ScratchError");

/** Raised when a scratch copy cannot be made; the message says what to do. */
export class ScratchError extends PencilError {
  override name = "ScratchError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a ScratchError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is ScratchError {
    return PencilError.hasMarker(error, MARKER);
  }
}
