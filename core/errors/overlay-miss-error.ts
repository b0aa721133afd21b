import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.OverlayMissError");

/** Raised for a path the staged view does not have; `code` mirrors the errno a disk read would give. */
export class OverlayMissError extends PencilError {
  override name = "OverlayMissError";
  readonly code = "ENOENT";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for an OverlayMissError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is OverlayMissError {
    return PencilError.hasMarker(error, MARKER);
  }
}
