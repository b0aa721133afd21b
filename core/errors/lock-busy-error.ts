import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.LockBusyError");

/** The workspace lock stayed held by a live process for longer than the wait allowed; the message names the holder and the file. */
export class LockBusyError extends PencilError {
  override name = "LockBusyError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a LockBusyError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is LockBusyError {
    return PencilError.hasMarker(error, MARKER);
  }
}
