import type { FileChange } from "./changeset.ts";
import { type Hunk, rebuildWithHunks, splitHunks } from "./hunks.ts";

const exact = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** A text file change's exact sides: strings that encode back to the very bytes (BOM and line endings kept). */
interface ExactSides {
  before: string;
  after: string;
}

function exactText(bytes: Uint8Array): string | null {
  try {
    const text = exact.decode(bytes);
    return Buffer.compare(Buffer.from(encoder.encode(text)), Buffer.from(bytes)) === 0 ? text : null;
  } catch {
    // Not valid UTF-8: not text that hunks can be cut from, so the file is decided whole.
    return null;
  }
}

function sides(file: FileChange): ExactSides | null {
  if (file.kind !== "modify" || file.binary || !file.before || !file.after) return null;
  const before = exactText(file.before);
  const after = exactText(file.after.bytes);
  return before === null || after === null ? null : { before, after };
}

/**
 * The hunks a modified text file can be reviewed by, or null when it cannot be split
 * (created, deleted, binary, base not known, not exact UTF-8, or the diff gave up).
 */
export function fileHunks(file: FileChange): Hunk[] | null {
  const s = sides(file);
  return s ? splitHunks(s.before, s.after) : null;
}

/** The bytes of the file's base with only the hunks at `kept` applied. Throws when the file cannot be split. */
export function keptBytes(file: FileChange, hunks: readonly Hunk[], kept: ReadonlySet<number>): Uint8Array {
  const s = sides(file);
  if (!s) throw new Error(`${file.path} cannot be reviewed hunk by hunk.`);
  return encoder.encode(rebuildWithHunks(s.before, hunks, kept));
}
