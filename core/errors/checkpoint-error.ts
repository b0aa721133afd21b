import { PencilError } from "./pencil-error.ts";
import { UsageFailure } from "./usage-failure.ts";

const MARKER = Symbol.for("pencil.error.CheckpointError");

/** A session or checkpoint a command names that cannot be used (none with that id or number, a fork directory in the way): exit 2. */
export class CheckpointError extends UsageFailure {
  override name = "CheckpointError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a CheckpointError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is CheckpointError {
    return PencilError.hasMarker(error, MARKER);
  }
}
