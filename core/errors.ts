// The error model: every failure Pencil raises on purpose is a PencilError, which
// carries its exit code and the words the person reads. Kept free of imports, so
// that recognising an error loads nothing else (the CLI maps them at start-up cost).

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
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
  }
}

/** A command line, id or setting the person must change before Pencil can run (exit 2). */
export class UsageFailure extends PencilError {
  override name = "UsageFailure";
  override readonly exitCode: number = 2;
}

/** An id (or prefix) that names no changeset, or several: a usage error, exit 2. */
export class UnknownChangesetError extends UsageFailure {
  override name = "UnknownChangesetError";
}

/** A file or directory of Pencil's own state that is there but cannot be read (permissions, I/O): said, never taken as none. */
export class UnreadableStateError extends PencilError {
  override name = "UnreadableStateError";
}

/** True when a file system error says the path is not there (only that is "none"; any other failure is said). */
export function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ENOENT";
}

/** An error's code (EACCES, EIO…) or, when it has none, its message: what the person is told it failed with. */
export function errorCause(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : error instanceof Error ? error.message : String(error);
}

/** A failure the model reads as the tool result; the message says what to do next. */
export class ToolError extends PencilError {
  override name = "ToolError";
}
