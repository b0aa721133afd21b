import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.TranscriptionError");

/** No provider could transcribe a voice note; the message says what each one answered. */
export class TranscriptionError extends PencilError {
  override name = "TranscriptionError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a TranscriptionError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is TranscriptionError {
    return PencilError.hasMarker(error, MARKER);
  }
}
