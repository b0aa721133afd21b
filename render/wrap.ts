// Text for a terminal of a given width: wrapped at word boundaries, never mid-word
// unless a single word is wider than the line, with ANSI colour codes not counted.

const ANSI = /\x1b\[[0-9;]*m/g;

/** Columns `text` takes on screen: colour codes take none. */
export function displayWidth(text: string): number {
  return [...text.replace(ANSI, "")].length;
}

/**
 * Wraps each line of `text` to `width` columns at spaces. Continuation lines start with
 * `indent` (a hanging indent: the gutter stays a gutter). A word wider than a line is
 * never cut. Colour codes count for nothing.
 */
export function wrapText(text: string, width: number, indent = ""): string {
  return text
    .split("\n")
    .map((line) => wrapLine(line, width, indent))
    .join("\n");
}

function wrapLine(line: string, width: number, indent: string): string {
  if (width <= 0 || displayWidth(line) <= width) return line;
  // Tokens: colour codes (zero width), runs of spaces, words.
  const tokens = line.match(/\x1b\[[0-9;]*m|[ ]+|[^ \x1b]+|\x1b/g) ?? [];
  const out: string[] = [];
  let current = "";
  let used = 0;
  let limit = width;
  const flush = () => {
    out.push(current.replace(/ +$/, ""));
    current = indent;
    used = displayWidth(indent);
    limit = width;
  };
  for (const token of tokens) {
    if (token.startsWith("\x1b")) {
      current += token;
      continue;
    }
    const w = displayWidth(token);
    if (token.startsWith(" ")) {
      if (used + w <= limit) {
        current += token;
        used += w;
      } else if (used > displayWidth(indent)) flush();
      continue;
    }
    if (used + w <= limit) {
      current += token;
      used += w;
      continue;
    }
    // A word wider than a line (a path, a URL) goes whole on its own line: cut, it could not be copied.
    if (used > displayWidth(indent)) flush();
    current += token;
    used += w;
  }
  out.push(current.replace(/ +$/, ""));
  return out.join("\n");
}
