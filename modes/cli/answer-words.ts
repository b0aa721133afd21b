/** What a typed answer at a terminal prompt means; anything else longer than one letter is a reason. */
export type AnswerWord = "yes" | "no" | "all" | "quit";

const WORDS: ReadonlyMap<string, AnswerWord> = new Map([
  ["y", "yes"],
  ["yes", "yes"],
  ["n", "no"],
  ["no", "no"],
  ["a", "all"],
  ["all", "all"],
  ["always", "all"],
  ["q", "quit"],
  ["quit", "quit"],
]);

/** The keyword a line stands for (case-insensitive, trimmed), or null when it is free text. */
export function answerWord(line: string): AnswerWord | null {
  return WORDS.get(line.trim().toLowerCase()) ?? null;
}
