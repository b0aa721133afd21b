/** The number of words in a text (runs of letters, digits and apostrophes). */
export function wordCount(text: string): number {
  return text.match(/[\p{L}\p{N}']+/gu)?.length ?? 0;
}

/** Reading time in whole minutes, at least 1. */
export function readingTime(text: string, wordsPerMinute = 220): number {
  return Math.max(1, Math.ceil(wordCount(text) / wordsPerMinute));
}
