// read_file shows `     12\tcode`; models copy that prefix (or their own `12: `,
// `12| ` renderings of it) into edit strings. These are recognised only on the
// first line and on following lines that continue its numbering, so a file whose
// own lines start with numbers is not mistaken for prefixed text.

const STYLES: RegExp[] = [/^ *(\d+)\t/, /^ *(\d+): /, /^ *(\d+) ?\| ?/];
// read_file's own prefix exactly: the number right-aligned in six columns, then a tab (a TSV row's "12\t" is not one).
const READ_FORMAT = /^(?=[ \d]{6}\t) *(\d+)\t/;

/**
 * old_string and new_string with read_file-style line-number prefixes removed,
 * or null when old_string's first line carries none. new_string loses prefixes
 * of the same style only. `readFormatOnly` accepts only read_file's exact six-column format.
 */
export function stripLinePrefixes(
  oldString: string,
  newString: string,
  options: { readFormatOnly?: boolean } = {},
): { oldString: string; newString: string } | null {
  const styles = options.readFormatOnly ? [READ_FORMAT] : STYLES;
  for (const style of styles) {
    const old = stripStyle(oldString, style);
    if (old === null) continue;
    return { oldString: old, newString: stripStyle(newString, style) ?? newString };
  }
  return null;
}

function stripStyle(text: string, style: RegExp): string | null {
  const lines = text.split("\n");
  const first = style.exec(lines[0]!);
  if (!first) return null;
  let expected = Number(first[1]);
  return lines
    .map((line, i) => {
      const m = style.exec(line);
      if (!m) return line;
      const n = Number(m[1]);
      // Following lines count on from the first; a new_string may restart where old_string began.
      if (i > 0 && n !== expected) return line;
      expected = n + 1;
      return line.slice(m[0].length);
    })
    .join("\n");
}
