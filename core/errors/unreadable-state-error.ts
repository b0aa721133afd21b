import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.UnreadableStateError");

/** A file or directory of Pencil's own state that is there but cannot be read (permissions, I/O): said, never taken as none. */
export class UnreadableStateError extends PencilError {
  override name = "UnreadableStateError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for an UnreadableStateError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is UnreadableStateError {
    return PencilError.hasMarker(error, MARKER);
  }
}
