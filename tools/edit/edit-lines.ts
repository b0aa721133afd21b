// Small line helpers shared by edit matching and its "did you mean" diagnosis.

// Characters of one line quoted in an answer.
const SHOWN_CHARS = 300;

/** A file's text split into lines once per edit, with each line's trimmed form, shared by matching and diagnosis. */
export class FileLines {
  private split: string[] | null = null;
  private trims: string[] | null = null;

  constructor(readonly text: string) {}

  get lines(): string[] {
    return (this.split ??= this.text.split("\n"));
  }

  /** Each line without leading and trailing whitespace (CR included). */
  get trimmed(): string[] {
    return (this.trims ??= this.lines.map((l) => l.trim()));
  }
}

/** The 0-based starts of every run of file lines whose trimmed forms equal those of `oldLines`. */
export function trimmedMatches(file: FileLines, oldLines: string[]): number[] {
  const want = oldLines.map((l) => l.trim());
  const have = file.trimmed;
  const out: number[] = [];
  const last = have.length - want.length;
  for (let i = 0; i <= last; i++) {
    let k = 0;
    while (k < want.length && have[i + k] === want[k]) k++;
    if (k === want.length) out.push(i);
  }
  return out;
}

/** The spaces and tabs a line starts with. */
export function leadOf(line: string): string {
  let i = 0;
  while (i < line.length && (line[i] === " " || line[i] === "\t")) i++;
  return line.slice(0, i);
}

/** The lines of a string; a final line break does not make an extra empty line. */
export function linesOf(s: string): string[] {
  const lines = s.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Offsets of the first `max` non-overlapping occurrences of `needle`. */
export function indexesOf(text: string, needle: string, max: number): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i !== -1 && out.length < max; i = text.indexOf(needle, i + needle.length))
    out.push(i);
  return out;
}

/** 1-based line of a character offset. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** "line 4" or "lines 2, 5, …" (at most ten listed). */
export function linesList(lines: number[]): string {
  const shown = lines.slice(0, 10).join(", ");
  return `line${lines.length > 1 ? "s" : ""} ${shown}${lines.length > 10 ? `, … ${lines.length - 10} more` : ""}`;
}

/** `s` cut to a quotable length. */
export function cut(s: string): string {
  return s.length <= SHOWN_CHARS ? s : `${s.slice(0, SHOWN_CHARS)}…`;
}
