// Every tool answer fits the model's context: a huge read, a search over
// minified lines or a command's long output is cut to a budget derived from the
// model's window, and the answer says what was shown and how to get the rest.

/** Characters per token assumed for code and logs (they tokenize denser than prose). */
const CHARS_PER_TOKEN = 3;
/** The share of the window one tool answer may take. */
const WINDOW_SHARE = 0.2;
const MIN_BUDGET = 2_000;

/** Characters one tool answer may have for a model with `contextWindow` tokens. */
export function answerBudgetFor(contextWindow: number): number {
  return Math.max(MIN_BUDGET, Math.floor(contextWindow * WINDOW_SHARE * CHARS_PER_TOKEN));
}

/**
 * `text` held to `budget` characters. Cut at a line end; a read says the offset to
 * read on from, a search to narrow its pattern, a command shows its head and its
 * tail (where errors are) and says how to narrow it. Text within budget is returned as is.
 */
export function fitAnswer(tool: string, text: string, budget: number): string {
  if (text.length <= budget) return text;
  const total = text.length.toLocaleString("en-US");
  if (tool === "run_command") {
    const headEnd = lineEnd(text, Math.floor(budget * 0.3));
    const tailStart = text.indexOf("\n", text.length - Math.floor(budget * 0.6)) + 1;
    const shown = headEnd + (text.length - tailStart);
    return `${text.slice(0, headEnd)}\n[… output cut to fit the context window: showing ${shown.toLocaleString("en-US")} of ${total} characters, the first and last lines; narrow the command's output (pipe it through tail, head or grep, or run the failing part alone) to see the rest]\n${text.slice(tailStart)}`;
  }
  const end = lineEnd(text, budget);
  const head = text.slice(0, end);
  const shown = end.toLocaleString("en-US");
  if (tool === "read_file") {
    const lastNumber = /(?:^|\n) *(\d+)\t[^\n]*$/.exec(head)?.[1];
    const next = lastNumber ? Number(lastNumber) + 1 : null;
    return `${head}\n[cut to fit the context window: showing ${shown} of ${total} characters${next ? `; read on at offset ${next} (read_file with offset ${next} and a smaller limit)` : "; read a smaller part with offset and limit"}]`;
  }
  if (tool === "search")
    return `${head}\n[cut to fit the context window: showing ${shown} of ${total} characters of matches; narrow the pattern, or give a path or glob, to see the rest (long minified lines match whole)]`;
  return `${head}\n[cut to fit the context window: showing ${shown} of ${total} characters; ask for less (a narrower pattern, a smaller part) to see the rest]`;
}

/** The end of the last whole line within `max` characters (or `max` itself when a single line is longer). */
function lineEnd(text: string, max: number): number {
  const nl = text.lastIndexOf("\n", max);
  return nl > max / 2 ? nl : max;
}
