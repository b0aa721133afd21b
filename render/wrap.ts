// Text for a terminal of a given width: wrapped at word boundaries, never mid-word
// unless a single word is wider than the line, with ANSI colour codes not counted.

const ANSI = /\x1b\[[0-9;]*m/g;

/** Columns `text` takes on screen: colour codes take none. */
function displayWidth(text: string): number {
  return [...text.replace(ANSI, "")].length;
}

/**
 * Wraps each line of `text` to `width` columns at spaces. Continuation lines start with
 * `indent` (a hanging indent: the gutter stays a gutter). Only a word wider than a
 * whole line is cut, at the edge. Colour codes count for nothing.
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
    if (w <= width - displayWidth(indent)) {
      if (used > displayWidth(indent)) flush();
      current += token;
      used += w;
      continue;
    }
    // A word wider than a whole line (a long path): cut at the edge, as the terminal itself would.
    let rest = [...token];
    while (rest.length > 0) {
      const space = limit - used;
      if (space <= 0) {
        flush();
        continue;
      }
      current += rest.slice(0, space).join("");
      used += Math.min(space, rest.length);
      rest = rest.slice(space);
      if (rest.length > 0) flush();
    }
  }
  out.push(current.replace(/ +$/, ""));
  return out.join("\n");
}
