import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.UndoError");

/** An undo that cannot start (nothing to undo, unknown id, entry not in an undoable state); the message says what to do. */
export class UndoError extends PencilError {
  override name = "UndoError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for an UndoError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is UndoError {
    return PencilError.hasMarker(error, MARKER);
  }
}
