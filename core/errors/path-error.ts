import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.PathError");

/** A path that cannot be resolved at all (empty, NUL byte, link loop); its message says what to do. */
export class PathError extends PencilError {
  override name = "PathError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a PathError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is PathError {
    return PencilError.hasMarker(error, MARKER);
  }
}
