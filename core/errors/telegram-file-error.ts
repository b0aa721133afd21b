import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.TelegramFileError");

/** A file could not be fetched from Telegram; the message says why and never holds the token. */
export class TelegramFileError extends PencilError {
  override name = "TelegramFileError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a TelegramFileError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is TelegramFileError {
    return PencilError.hasMarker(error, MARKER);
  }
}
