import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.DumpRefused");

/** A dump refused before anything was stored; the message says why and what to do. */
export class DumpRefused extends PencilError {
  override name = "DumpRefused";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** True for a DumpRefused or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is DumpRefused {
    return PencilError.hasMarker(error, MARKER);
  }
}
