import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.JournalError");

/** A journal that cannot be read or an operation it does not allow; the message says what to do. */
export class JournalError extends PencilError {
  override name = "JournalError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a JournalError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is JournalError {
    return PencilError.hasMarker(error, MARKER);
  }
}
