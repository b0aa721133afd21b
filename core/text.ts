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

/** True for content that is not UTF-8 text: a NUL byte in the first 8 KiB, or invalid UTF-8. */
export function isBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  try {
    utf8.decode(bytes);
    return false;
  } catch {
    return true;
  }
}

/** Decodes UTF-8 text into its LF view; null for binary content. CRLF wins when most line breaks are CRLF. */
export function decodeText(bytes: Uint8Array): DecodedText | null {
  if (isBinary(bytes)) return null;
  let text = utf8.decode(bytes);
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
