import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.UsageFailure");

/** A command line, id or setting the person must change before Pencil can run (exit 2): a flag or word that cannot be understood, a model setting, a changeset or apply named for another workspace. */
export class UsageFailure extends PencilError {
  override name = "UsageFailure";
  override readonly exitCode: number = 2;
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a UsageFailure or any of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is UsageFailure {
    return PencilError.hasMarker(error, MARKER);
  }
}
