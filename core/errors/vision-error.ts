import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.VisionError");

/** The vision model could not describe the photo; the message says why and what to do. */
export class VisionError extends PencilError {
  override name = "VisionError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a VisionError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is VisionError {
    return PencilError.hasMarker(error, MARKER);
  }
}
