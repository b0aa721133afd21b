/**
 * Finds, in content the agent read, text addressed to an AI agent and text hidden from
 * a human reader. It only tells: a finding flags the changes staged after it, it never
 * blocks anything. The rules are a few regular expressions over the whole text, so a
 * scan is one pass per rule.
 */

/** One place in read content that deserves the owner's eye. */
export interface InstructionFinding {
  /** `hidden`: Unicode tag characters, zero-width or bidi controls; `addressed`: words written to an AI agent. */
  kind: "hidden" | "addressed";
  /** 1-based line in the content scanned. */
  line: number;
  /** The text, quoted: hidden characters shown as escapes, tag characters also decoded. At most QUOTE_CHARS. */
  quote: string;
  /** Where in the content's syntax it sat, when that hides it from a reader (an HTML comment, alt text). */
  within?: "comment" | "alt text";
}

const QUOTE_CHARS = 200;
/** Findings kept per scanned content: the first few say enough. */
const MAX_FINDINGS = 5;

/** Unicode tag characters (U+E0000–U+E007F, as UTF-16 pairs), zero-width characters and bidi controls. */
const HIDDEN = /[\u200b-\u200d\u2060\u2062-\u2064\u202a-\u202e\u2066-\u206f\ufeff\udb40]/g;

/** True when the character HIDDEN matched at `at` is hidden text: a BOM only past the start, U+DB40 only as the first half of a tag character. */
function isHidden(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  if (code === 0xfeff) return at > 0;
  if (code === 0xdb40) {
    const low = text.charCodeAt(at + 1);
    return low >= 0xdc00 && low <= 0xdc7f;
  }
  return true;
}

/**
 * Phrases written to an AI agent rather than to a person: orders to drop earlier
 * instructions, an agent named and then told what to do, notes "for the AI", role tags.
 */
const ADDRESSED: RegExp[] = [
  /\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|original)\s+(?:instructions|prompts?|rules|directions|guidelines)/gi,
  /\b(?:ai\s+(?:agent|assistant|model)s?|assistant|coding\s+agent|llms?|language\s+models?|chatgpt|claude|copilot|gemini|gpt-?\d?)\s*[:,]\s*(?:when|while|please|you\s+(?:must|should|will)|always|never|also|do\s+not|don't|now|make\s+sure|remember|add|insert|change|set|include|before|after)\b/gi,
  /\b(?:if|when)\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|language\s+model|assistant|coding\s+agent|agent|bot)\b/gi,
  /\b(?:note|notes|instructions?|message|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+)?(?:ai|llm|assistant|agent|model|bot)s?\b/gi,
  /\b(?:do\s+not|don't|never)\s+(?:tell|mention\s+(?:this\s+)?to|inform|show\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to)\s+the\s+(?:user|owner|human|reviewer)\b/gi,
  /<\/?\s*(?:system|assistant|instructions?|im_start|\|im_start\|)\s*>|\[\/?INST\]|<\|im_start\|>/gi,
  /\bnew\s+instructions\s*:/gi,
];

/** The findings in `text`, first first. Pure; linear in the text for each rule. */
export function scanForInstructions(text: string): InstructionFinding[] {
  const found: { at: number; end: number; kind: InstructionFinding["kind"] }[] = [];
  HIDDEN.lastIndex = 0;
  for (let m = HIDDEN.exec(text); m && found.length < MAX_FINDINGS; m = HIDDEN.exec(text)) {
    if (!isHidden(text, m.index)) continue;
    found.push({ at: m.index, end: m.index + m[0].length, kind: "hidden" });
    // One finding per line is enough: skip to the next line.
    const next = text.indexOf("\n", m.index);
    if (next === -1) break;
    HIDDEN.lastIndex = next;
  }
  for (const rule of ADDRESSED) {
    rule.lastIndex = 0;
    for (let m = rule.exec(text); m && found.length < 2 * MAX_FINDINGS; m = rule.exec(text))
      found.push({ at: m.index, end: m.index + m[0].length, kind: "addressed" });
  }
  found.sort((a, b) => a.at - b.at);
  const seenLines = new Set<number>();
  const out: InstructionFinding[] = [];
  for (const f of found) {
    const start = text.lastIndexOf("\n", f.at - 1) + 1;
    const stop = text.indexOf("\n", f.end);
    const line = lineNumberAt(text, f.at);
    if (seenLines.has(line)) continue;
    seenLines.add(line);
    const within = contextOf(text, f.at);
    out.push({
      kind: f.kind,
      line,
      quote: quoteOf(text.slice(start, stop === -1 ? text.length : stop)),
      ...(within ? { within } : {}),
    });
    if (out.length >= MAX_FINDINGS) break;
  }
  return out;
}

function lineNumberAt(text: string, at: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < at; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** Inside an HTML comment, or inside an alt attribute or a Markdown image's alt text. */
function contextOf(text: string, at: number): InstructionFinding["within"] | undefined {
  const open = text.lastIndexOf("<!--", at);
  if (open !== -1 && text.lastIndexOf("-->", at) < open) return "comment";
  const lineStart = text.lastIndexOf("\n", at) + 1;
  const before = text.slice(lineStart, at);
  if (/\balt\s*=\s*["'][^"']*$/i.test(before) || /!\[[^\]]*$/.test(before)) return "alt text";
  return undefined;
}

/** A line made safe to quote: trimmed, tag characters decoded as `⟨tags: …⟩`, other hidden characters as `\u{…}`, cut to QUOTE_CHARS. */
function quoteOf(line: string): string {
  let out = "";
  let tags = "";
  const flush = () => {
    if (tags) out += `⟨tags: ${tags}⟩`;
    tags = "";
  };
  for (const ch of line.trim()) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xe0000 && code <= 0xe007f) {
      const ascii = code - 0xe0000;
      tags += ascii >= 0x20 && ascii < 0x7f ? String.fromCharCode(ascii) : "";
      continue;
    }
    flush();
    if (
      (code >= 0x200b && code <= 0x200d) ||
      code === 0x2060 ||
      code === 0xfeff ||
      (code >= 0x202a && code <= 0x202e) ||
      (code >= 0x2062 && code <= 0x206f)
    ) {
      out += `\\u{${code.toString(16)}}`;
      continue;
    }
    out += code < 0x20 && ch !== "\t" ? `\\x${code.toString(16).padStart(2, "0")}` : ch;
  }
  flush();
  return out.length > QUOTE_CHARS ? `${out.slice(0, QUOTE_CHARS - 1)}…` : out;
}
