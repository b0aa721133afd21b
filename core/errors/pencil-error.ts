// The error model: every failure Pencil raises on purpose is a PencilError, which
// carries its exit code and the words the person reads. Kept free of imports, so
// that recognising an error loads nothing else (the CLI maps them at start-up cost).
// Each kind lives in its own file beside this one, with its own marker.

const MARKER = Symbol.for("pencil.error");

/**
 * A failure Pencil raises on purpose. `exitCode` is the process exit code it maps to
 * (README "Commands", its exit codes: 1 failed, 2 usage or configuration); `label` and
 * `userMessage` are what the person reads (`label userMessage`).
 */
export class PencilError extends Error {
  override name = "PencilError";
  /** The exit code a command ends with when this error reaches the top. */
  readonly exitCode: number = 1;
  /** The word(s) before the message, e.g. `error:` or `configuration error`. */
  readonly label: string = "error:";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  /** The message for the person, after the label. */
  get userMessage(): string {
    return this.message;
  }

  /** True for any PencilError, even one from another copy of this module (a marker, not the prototype chain). */
  static isInstance(error: unknown): error is PencilError {
    return PencilError.hasMarker(error, MARKER);
  }

  /** True when `error` carries `marker`: how each kind's isInstance recognises its own, whichever copy made it. */
  protected static hasMarker(error: unknown, marker: symbol): boolean {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}
