import { PencilError } from "./pencil-error.ts";

const MARKER = Symbol.for("pencil.error.ShellParserNotLoaded");

/** Thrown when a line needs tree-sitter before loadShellParser has finished: load it, then judge again. */
export class ShellParserNotLoaded extends PencilError {
  override name = "ShellParserNotLoaded";
  /** The isInstance marker. */
  readonly [MARKER] = true;

  constructor() {
    super(
      "This command line needs the shell parser, which is not loaded yet: await loadShellParser() and judge it again.",
    );
  }

  /** True for a ShellParserNotLoaded or one of its kinds, even one from another copy of this module (a marker, not the prototype chain). */
  static override isInstance(error: unknown): error is ShellParserNotLoaded {
    return PencilError.hasMarker(error, MARKER);
  }
}
