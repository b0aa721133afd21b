/** Characters of one piece of text sent to the embedding model (well under every provider's input limit). */
const CHUNK_CHARS = 4000;
/** Pieces of one note that are embedded at most; the rest of a long note is still found by full-text search. */
export const MAX_EMBEDDED_CHUNKS = 32;

/**
 * Cuts text into pieces of at most `size` characters, at a paragraph break when
 * there is one in the second half of the piece, else at a sentence or word break.
 */
export function chunkText(text: string, size = CHUNK_CHARS): string[] {
  const chunks: string[] = [];
  let rest = text.trim();
  while (rest.length > size) {
    const window = rest.slice(0, size);
    const cut =
      lastBreak(window, "\n\n") ?? lastBreak(window, ". ") ?? lastBreak(window, "\n") ?? lastBreak(window, " ") ?? size;
    chunks.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) chunks.push(rest);
  return chunks;
}

function lastBreak(window: string, separator: string): number | undefined {
  const at = window.lastIndexOf(separator);
  return at >= window.length / 2 ? at + separator.length : undefined;
}
