import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.ToolError");

/** A failure the model reads as the tool result; the message says what to do next. */
export class ToolError extends PencilError {
  override name = "ToolError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a ToolError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is ToolError {
    return PencilError.hasMarker(error, MARKER);
  }
}
