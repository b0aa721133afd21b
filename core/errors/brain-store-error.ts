import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.BrainStoreError");

/** The brain could not be opened or used; the message names the place and what to do. Exit 1. */
export class BrainStoreError extends PencilError {
  override name = "BrainStoreError";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a BrainStoreError or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is BrainStoreError {
    return PencilError.hasMarker(error, MARKER);
  }
}
