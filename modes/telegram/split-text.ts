/**
 * Splits text into pieces of at most `max` UTF-16 units, cutting only after a line
 * break; a single line longer than `max` is cut inside (never inside a surrogate
 * pair). Nothing is dropped: the pieces joined give back the text exactly.
 */
export function splitAtLines(text: string, max: number): string[] {
  if (max < 2) throw new Error(`splitAtLines needs room for at least 2 characters, got ${max}.`);
  const pieces: string[] = [];
  let current = "";
  for (const line of linesWithBreaks(text)) {
    if (current.length + line.length <= max) {
      current += line;
      continue;
    }
    if (current) pieces.push(current);
    current = "";
    let rest = line;
    while (rest.length > max) {
      let cut = max;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1; // keep a surrogate pair together
      pieces.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    current = rest;
  }
  if (current) pieces.push(current);
  return pieces;
}

/** The lines of a text, each with its `\n` (the last one without, when the text does not end with one). */
function linesWithBreaks(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf("\n", start);
    if (end < 0) {
      out.push(text.slice(start));
      break;
    }
    out.push(text.slice(start, end + 1));
    start = end + 1;
  }
  return out;
}

/**
 * As many whole lines as fit in `max` visible characters (measured by `measure`),
 * then a line from `more` saying how many were left out: a list is cut, never silently.
 */
export function takeLines(
  lines: string[],
  max: number,
  more: (left: number) => string,
  measure: (text: string) => number = (t) => t.length,
): string[] {
  const kept: string[] = [];
  for (const [i, line] of lines.entries()) {
    const left = lines.length - i;
    const withLine = [...kept, line];
    const needsNote = left > 1;
    if (measure([...withLine, ...(needsNote ? [more(left - 1)] : [])].join("\n")) > max) {
      kept.push(more(left));
      return kept;
    }
    kept.push(line);
  }
  return kept;
}
