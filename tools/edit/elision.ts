import { diffLines } from "diff";

// Small models rewriting a whole file often write a placeholder comment where
// they mean "keep what was there" (`// ... rest of the file unchanged ...`).
// Staged as is, that deletes the code it stands for. These are recognised here.

/** A line of new content that stands in for code it omits. */
interface Placeholder {
  /** 1-based line in the new content. */
  line: number;
  text: string;
}

// A comment (//, #, /*, <!--, --, ;, *) whose text is an ellipsis, or says the code is kept/omitted.
const COMMENT = /^\s*(?:\/\/+|#+|\/\*+|<!--|--|;+|\*)\s*(.*?)\s*(?:\*+\/|-->)?\s*$/;
const ELLIPSIS = /(?:\.\.\.|…)/;
const KEPT =
  /\b(?:rest of (?:the )?(?:file|code|class|function|module|component|implementation|methods?|imports?|tests?)|(?:existing|previous|original|other|remaining) (?:code|methods|functions|imports|tests|content|implementation|logic)(?: (?:here|goes here|unchanged|stays|remains))?|same as (?:before|above)|(?:code|implementation) (?:goes )?here|keep (?:the )?(?:rest|existing))\b/i;
const VAGUE = /\b(?:unchanged|rest|remaining|existing|same|here|etc|omitted|more)\b/i;

/** Lines of `content` that read as placeholders for omitted code (empty when none). */
function findPlaceholders(content: string): Placeholder[] {
  const out: Placeholder[] = [];
  const lines = content.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length > 200) continue;
    const m = COMMENT.exec(line);
    const body = m ? m[1]! : line.trim();
    const bareEllipsis = /^(?:\.\.\.|…)$/.test(body);
    const isComment = m !== null;
    const placeholder = isComment
      ? bareEllipsis || KEPT.test(body) || (ELLIPSIS.test(body) && VAGUE.test(body))
      : /^…$|^(?:\.\.\.|…)\s*(?:rest|existing|remaining)\b/i.test(body);
    if (placeholder) {
      out.push({ line: i + 1, text: line.trim() });
    }
  }
  return out;
}

/** 1-based line ranges of `before` that `after` drops, and the count (bounded: a pathological diff counts everything). */
export function removedLines(
  before: string,
  after: string,
): { count: number; ranges: [number, number][]; total: number } {
  const total = splitLines(before).length;
  const changes = diffLines(before, after, { timeout: 500 });
  if (!changes) return { count: total, ranges: total > 0 ? [[1, total]] : [], total };
  const ranges: [number, number][] = [];
  let line = 1;
  let count = 0;
  for (const c of changes) {
    const n = c.count ?? 0;
    if (c.added) continue;
    if (c.removed && n > 0) {
      ranges.push([line, line + n - 1]);
      count += n;
    }
    line += n;
  }
  return { count, ranges, total };
}

/** The refusal for a whole-file write whose placeholders would drop code; null when nothing is lost or no placeholder is there. */
export function elisionRefusal(display: string, before: string | null, after: string, tool: string): string | null {
  const placeholders = findPlaceholders(after);
  if (placeholders.length === 0) return null;
  const where = placeholders
    .slice(0, 3)
    .map((p) => `line ${p.line} ${JSON.stringify(p.text)}`)
    .join(", ");
  if (before === null) {
    return `${tool} refused: the content stands in for code it omits (${where}), but ${display} does not exist, so nothing would fill that gap. Write the complete content, or check the path with list_files if you meant an existing file.`;
  }
  const lost = removedLines(before, after);
  if (lost.count === 0) return null;
  const lines = splitLines(before);
  const ranges = lost.ranges
    .slice(0, 5)
    .map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`))
    .join(", ");
  const lostLines = lost.ranges
    .flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, k) => a + k))
    .filter((n) => (lines[n - 1] ?? "").trim() !== "");
  const sample = lostLines.slice(0, 8).map((n) => `${String(n).padStart(6)}\t${(lines[n - 1] ?? "").slice(0, 200)}`);
  return [
    `${tool} refused: the content has a placeholder for omitted code (${where}), so ${lost.count} line${lost.count === 1 ? "" : "s"} of ${display} would be lost (lines ${ranges}${lost.ranges.length > 5 ? ", …" : ""}), e.g.:`,
    ...sample,
    `Nothing was staged. Use edit_file to change only the part you mean, or write the complete file without placeholders.`,
  ].join("\n");
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * The refusal for an edit whose new_string has a placeholder (`// ... existing code ...`)
 * standing for lines of old_string it drops; null when none is lost. `firstLine` is
 * the 1-based file line where old_string matched, so the lines are named as the file numbers them.
 */
export function editElisionRefusal(
  display: string,
  oldString: string,
  newString: string,
  firstLine: number,
): string | null {
  const had = new Set(findPlaceholders(oldString).map((p) => p.text));
  const placeholders = findPlaceholders(newString).filter((p) => !had.has(p.text));
  if (placeholders.length === 0) return null;
  const lost = removedLines(oldString, newString);
  const oldLines = splitLines(oldString);
  const lostLines = lost.ranges
    .flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, k) => a + k))
    .filter((n) => (oldLines[n - 1] ?? "").trim() !== "" && !had.has((oldLines[n - 1] ?? "").trim()));
  if (lostLines.length === 0) return null;
  const where = placeholders
    .slice(0, 3)
    .map((p) => JSON.stringify(p.text))
    .join(", ");
  const sample = lostLines
    .slice(0, 10)
    .map((n) => `${String(firstLine + n - 1).padStart(6)}\t${(oldLines[n - 1] ?? "").slice(0, 200)}`);
  return [
    `edit_file refused: new_string has a placeholder for code it omits (${where}), so ${lostLines.length} line${lostLines.length === 1 ? "" : "s"} of ${display} that old_string covers would be deleted:`,
    ...sample,
    ...(lostLines.length > 10 ? [`  … ${lostLines.length - 10} more`] : []),
    "Nothing was staged. Put those lines in new_string as they are, or make old_string smaller so it covers only what you change.",
  ].join("\n");
}
