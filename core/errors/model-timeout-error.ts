import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.ModelTimeoutError");

/** A model that sent nothing for longer than the configured timeout. */
export class ModelTimeoutError extends PencilError {
  override name = "ModelTimeoutError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a ModelTimeoutError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is ModelTimeoutError {
    return PencilError.hasMarker(error, MARKER);
  }
}
