import { PencilError } from "./pencil-error.ts";
import { UsageFailure } from "./usage-failure.ts";

const MARKER = Symbol.for("pencil.error.ConfigError");

/** A settings file or rule that cannot be used; the CLI turns it into exit 2. */
export class ConfigError extends UsageFailure {
  override name = "ConfigError";
  override readonly label = "configuration error";
  /** The settings file (or CLI flag) at fault. */
  readonly file: string;
  /** The rule text at fault, when one rule is the problem. */
  readonly rule?: string;
  /** The isInstance marker. */
  readonly [MARKER] = true;

  constructor(message: string, file: string, rule?: string) {
    super(message);
    this.file = file;
    this.rule = rule;
  }

  override get userMessage(): string {
    return `in ${this.file}${this.rule ? ` (rule ${this.rule})` : ""}: ${this.message}`;
  }

  /** True for a ConfigError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is ConfigError {
    return PencilError.hasMarker(error, MARKER);
  }
}
