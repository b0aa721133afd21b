import { ConfigError } from "./config-error.ts";
import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.TelegramConfigError");

/** A missing or malformed bot setting (exit 2); the message names the variable and what to do, never the token. */
export class TelegramConfigError extends ConfigError {
  override name = "TelegramConfigError";
  /** The environment variable at fault, e.g. `TELEGRAM_BOT_TOKEN`. */
  readonly variable: string;
  /** The isInstance marker. */
  readonly [MARKER] = true;

  constructor(message: string, variable: string) {
    super(message, "environment (.env)");
    this.variable = variable;
  }

  /** True for a TelegramConfigError, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is TelegramConfigError {
    return PencilError.hasMarker(error, MARKER);
  }
}
