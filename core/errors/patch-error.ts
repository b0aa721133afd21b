import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.PatchError");

/** A patch that cannot be read or applied; the message says where and what to do. */
export class PatchError extends PencilError {
  override name = "PatchError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a PatchError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is PatchError {
    return PencilError.hasMarker(error, MARKER);
  }
}
