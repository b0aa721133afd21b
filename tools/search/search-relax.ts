// When a search finds nothing, the likeliest reasons are spacing (`10%` for
// `10 %`, `TAX_RATE=0.1` for `TAX_RATE = 0.10`), a number written another way,
// capitalisation, or a phrase that mixes two identifiers. These are the relaxed
// patterns tried, in order; each says in words what it relaxed.

import { escapeRegex, relaxWhitespace } from "./rust-regex.ts";

/** A relaxed form of the model's pattern and, in words, what it relaxes. */
export interface Relaxation {
  pattern: string;
  how: string;
}

/** The relaxations of `source` worth trying, most faithful first (without the identifier-alone ones; see identifiersOf). */
export function relaxationsOf(source: string): Relaxation[] {
  const out: Relaxation[] = [];
  const add = (pattern: string | null, how: string) => {
    if (pattern && pattern !== source && !out.some((r) => r.pattern === pattern)) out.push({ pattern, how });
  };
  const hasLetters = /[A-Za-z]/.test(source) && !source.startsWith("(?i)");
  if (hasLetters) add(`(?i)${source}`, "Case-insensitive");
  const spaced = relaxWhitespace(source);
  add(spaced, "With whitespace relaxed (\\s+)");
  if (hasLetters && spaced) add(`(?i)${spaced}`, "Case-insensitive with whitespace relaxed");
  const loose = loosePattern(source);
  add(loose, "Allowing spaces around punctuation and numbers with or without trailing zeros");
  if (hasLetters && loose)
    add(`(?i)${loose}`, "Case-insensitive, allowing spaces around punctuation and trailing zeros");
  const literal = escapeRegex(source);
  add(literal, "Taken literally (regex characters escaped)");
  return out;
}

/** The identifiers in a pattern worth searching alone (longest first, at most 3; escapes like \\b are not words). */
export function identifiersOf(source: string): string[] {
  const words = source.replace(/\\[A-Za-z]/g, " ").replace(/\(\?[a-z]+\)/g, " ");
  const ids = [...new Set(words.match(/[A-Za-z_$][\w$]{2,}/g) ?? [])];
  if (ids.length === 0 || (ids.length === 1 && ids[0] === source.trim())) return [];
  return ids.sort((a, b) => b.length - a.length).slice(0, 3);
}

/**
 * The pattern as literal text with `\s*` allowed between words and punctuation,
 * and numbers matching with or without trailing zeros; null for a real regex
 * (quantifiers, groups, classes) where such rewriting would change its meaning.
 */
function loosePattern(source: string): string | null {
  const literal = literalText(source);
  if (literal === null || literal.trim() === "") return null;
  const tokens = literal.match(/\d+(?:\.\d+)?|[A-Za-z_$][\w$]*|\s+|./g) ?? [];
  const parts: string[] = [];
  for (const t of tokens) {
    if (/^\s+$/.test(t)) continue;
    parts.push(/^\d/.test(t) ? numberPattern(t) : escapeRegex(t));
  }
  if (parts.length === 0) return null;
  return parts.join("\\s*");
}

/** `0.1` and `0.10` both as `0\.10*`; `1` and `1.0` both as `1(?:\.0*)?`. */
function numberPattern(n: string): string {
  const [whole, fraction = ""] = n.split(".");
  const digits = fraction.replace(/0+$/, "");
  if (digits === "") return `${whole}(?:\\.0*)?\\b`;
  return `${whole}\\.${digits}0*\\b`;
}

/** The text a pattern means when it is a plain string (escapes read, an unescaped `.` taken as a dot); null for a real regex. */
function literalText(source: string): string | null {
  let out = "";
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      const next = source[i + 1];
      if (next === undefined || /[A-Za-z0-9]/.test(next)) return null;
      out += next;
      i++;
      continue;
    }
    if ("*+?()[]{}|^$".includes(c)) return null;
    out += c;
  }
  return out;
}
