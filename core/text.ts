/** How a text file is encoded on disk, so an edit made on its LF/no-BOM view can be written back the same way. */
export interface TextStyle {
  bom: boolean;
  eol: "\n" | "\r\n";
}

/** A file's content as the model sees it: LF line endings, no BOM, plus how to restore the original style. */
export interface DecodedText {
  text: string;
  style: TextStyle;
}

const BINARY_SNIFF_BYTES = 8192;
// ignoreBOM keeps a BOM in the decoded text, so decodeText can see it and restore it on write.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();
// Used only on byte runs already checked to be valid UTF-8.
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

/** True for content that is not UTF-8 text: a NUL byte in the first 8 KiB, or invalid UTF-8. */
export function isBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  try {
    utf8.decode(bytes);
    return false;
  } catch {
    // Not valid UTF-8: binary, by this definition.
    return true;
  }
}

/** First code point of the range revealBytes maps invalid bytes to: byte b becomes U+10FF00 + b (b ≥ 0x80). */
const REVEALED_BYTE_BASE = 0x10ff00;

/**
 * Decodes bytes as UTF-8 whatever they hold, so content that is "binary" only
 * because of a few bytes can still be read in the review: valid sequences are kept
 * (NUL too, which the review shows as `\x00`), each byte of an invalid one becomes
 * U+10FF00 + byte, a private-use code point the review shows as `\xNN`.
 */
export function revealBytes(bytes: Uint8Array): string {
  const parts: string[] = [];
  let chunk = 0;
  let i = 0;
  const n = bytes.length;
  const flush = (end: number) => {
    if (end > chunk) parts.push(lenient.decode(bytes.subarray(chunk, end)));
  };
  while (i < n) {
    const b = bytes[i]!;
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len > 0 && validSequence(bytes, i, len)) {
      i += len;
      continue;
    }
    flush(i);
    parts.push(String.fromCodePoint(REVEALED_BYTE_BASE + b));
    i += 1;
    chunk = i;
  }
  flush(n);
  return parts.join("");
}

/** Counts the bytes revealBytes cannot show as text: invalid UTF-8 and control bytes other than tab, line feed, form feed and carriage return. */
export function unreadableBytes(bytes: Uint8Array): number {
  let bad = 0;
  for (const ch of revealBytes(bytes)) {
    const c = ch.codePointAt(0)!;
    if (c >= REVEALED_BYTE_BASE || (c < 0x20 && c !== 9 && c !== 10 && c !== 12 && c !== 13) || c === 0x7f) bad++;
  }
  return bad;
}

function validSequence(bytes: Uint8Array, i: number, len: number): boolean {
  if (i + len > bytes.length) return false;
  const b0 = bytes[i]!;
  for (let k = 1; k < len; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return false;
  if (len === 3) {
    const b1 = bytes[i + 1]!;
    if ((b0 === 0xe0 && b1 < 0xa0) || (b0 === 0xed && b1 >= 0xa0)) return false; // overlong, surrogates
  } else if (len === 4) {
    const b1 = bytes[i + 1]!;
    if ((b0 === 0xf0 && b1 < 0x90) || (b0 === 0xf4 && b1 >= 0x90)) return false; // overlong, past U+10FFFF
  }
  return true;
}

/** Decodes UTF-8 text into its LF view; null for binary content. CRLF wins when most line breaks are CRLF. */
export function decodeText(bytes: Uint8Array): DecodedText | null {
  if (isBinary(bytes)) return null;
  return lfView(utf8.decode(bytes));
}

/** Like decodeText, but for any bytes: content that is not UTF-8 text comes back revealed (see revealBytes), never null. */
export function revealText(bytes: Uint8Array): DecodedText {
  return decodeText(bytes) ?? lfView(revealBytes(bytes));
}

function lfView(decoded: string): DecodedText {
  let text = decoded;
  const bom = text.charCodeAt(0) === 0xfeff;
  if (bom) text = text.slice(1);
  const crlf = countOf(text, "\r\n");
  const lf = countOf(text, "\n");
  const eol = crlf > 0 && crlf * 2 >= lf ? "\r\n" : "\n";
  if (eol === "\r\n") text = text.replaceAll("\r\n", "\n");
  return { text, style: { bom, eol } };
}

/** Encodes an LF view back to bytes in the given style (the file's own, for an edit). */
export function encodeText(text: string, style: TextStyle): Uint8Array {
  let out = style.eol === "\r\n" ? text.replace(/\r?\n/g, "\r\n") : text;
  if (style.bom) out = "\ufeff" + out;
  return encoder.encode(out);
}

/** The style of a new file: LF, no BOM. */
export const DEFAULT_STYLE: TextStyle = { bom: false, eol: "\n" };

function countOf(text: string, needle: string): number {
  let n = 0;
  let i = text.indexOf(needle);
  while (i !== -1) {
    n++;
    i = text.indexOf(needle, i + needle.length);
  }
  return n;
}

/** `text` on one line (runs of white space made one space), cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
