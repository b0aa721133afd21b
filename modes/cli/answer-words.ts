/** What a word typed at a key prompt means: the exact words of a key, a word that sounds like one, or nothing. */
export type WordMeaning = { kind: "key"; key: string } | { kind: "sounds-like"; key: "y" | "n" } | { kind: "unknown" };

// The keys' own names act like the keys; nothing else is ever taken without a confirmation.
const EXACT: ReadonlyMap<string, string> = new Map([
  ["yes", "y"],
  ["no", "n"],
]);

const SOUNDS_YES = new Set([
  "ok",
  "okay",
  "k",
  "lgtm",
  "approve",
  "approved",
  "accept",
  "sure",
  "yep",
  "yeah",
  "yup",
  "fine",
  "good",
  "looks good",
  "ship it",
  "go",
  "do it",
  "👍",
]);
const SOUNDS_NO = new Set(["nope", "nah", "reject", "rejected", "deny", "refuse", "skip", "👎"]);

/** The meaning of a word typed where a single key was expected (case-insensitive, trimmed, trailing punctuation ignored). */
export function wordMeaning(word: string): WordMeaning {
  const w = word
    .trim()
    .toLowerCase()
    .replace(/[.!]+$/, "");
  const exact = EXACT.get(w);
  if (exact) return { kind: "key", key: exact };
  if (SOUNDS_YES.has(w)) return { kind: "sounds-like", key: "y" };
  if (SOUNDS_NO.has(w)) return { kind: "sounds-like", key: "n" };
  return { kind: "unknown" };
}
