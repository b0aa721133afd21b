import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.GitConfigSyntaxError");

/** A git config file that git itself would refuse; the message names the line. */
export class GitConfigSyntaxError extends PencilError {
  override name = "GitConfigSyntaxError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a GitConfigSyntaxError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is GitConfigSyntaxError {
    return PencilError.hasMarker(error, MARKER);
  }
}
