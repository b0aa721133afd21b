// A file's bytes read as text the way ripgrep reads them, so that the JS search
// and the double-check of rg's lines see the same lines rg does.

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const lossyUtf8 = new TextDecoder("utf-8");
const utf16le = new TextDecoder("utf-16le");
const utf16be = new TextDecoder("utf-16be");

/**
 * A file's text as ripgrep searches it: a UTF-8 BOM dropped, UTF-16 (with a BOM)
 * transcoded, and each byte of invalid UTF-8 kept as the lone surrogate
 * U+DC80+byte, which no compiled pattern matches (as Rust never matches such
 * bytes). Null for binary content: a NUL byte anywhere.
 */
export function decodeForSearch(bytes: Uint8Array): string | null {
  const b0 = bytes[0];
  const b1 = bytes[1];
  if (b0 === 0xff && b1 === 0xfe) return noNul(utf16le.decode(bytes.subarray(2)));
  if (b0 === 0xfe && b1 === 0xff) return noNul(utf16be.decode(bytes.subarray(2)));
  if (bytes.indexOf(0) !== -1) return null;
  const body = b0 === 0xef && b1 === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  return decodeLine(body);
}

function noNul(text: string): string | null {
  return text.includes("\0") ? null : text;
}

/** UTF-8 bytes to text, invalid bytes kept as lone surrogates U+DC80+byte. */
export function decodeLine(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    // Not valid UTF-8: shown with its invalid bytes escaped.
    return decodeEscaped(bytes);
  }
}

function decodeEscaped(b: Uint8Array): string {
  const units: number[] = [];
  let out = "";
  let i = 0;
  while (i < b.length) {
    const x = b[i]!;
    let need = 0;
    let cp = 0;
    let lo = 0x80;
    let hi = 0xbf;
    if (x < 0x80) {
      units.push(x);
      i++;
    } else {
      if (x >= 0xc2 && x <= 0xdf) [need, cp] = [1, x & 0x1f];
      else if (x >= 0xe0 && x <= 0xef)
        [need, cp, lo, hi] = [2, x & 0x0f, x === 0xe0 ? 0xa0 : 0x80, x === 0xed ? 0x9f : 0xbf];
      else if (x >= 0xf0 && x <= 0xf4)
        [need, cp, lo, hi] = [3, x & 0x07, x === 0xf0 ? 0x90 : 0x80, x === 0xf4 ? 0x8f : 0xbf];
      let ok = need > 0;
      for (let j = 1; ok && j <= need; j++) {
        const y = b[i + j];
        if (y === undefined || y < (j === 1 ? lo : 0x80) || y > (j === 1 ? hi : 0xbf)) ok = false;
        else cp = (cp << 6) | (y & 0x3f);
      }
      if (!ok) {
        units.push(0xdc00 + x);
        i++;
      } else {
        if (cp > 0xffff) units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
        else units.push(cp);
        i += need + 1;
      }
    }
    if (units.length >= 8192) {
      out += String.fromCharCode(...units);
      units.length = 0;
    }
  }
  return out + String.fromCharCode(...units);
}

const ESCAPED_BYTE = /[\uDC80-\uDCFF]/;

/** A searched line as shown to the model: escaped invalid bytes become U+FFFD the way a UTF-8 decoder shows them. */
export function displayLine(line: string): string {
  if (!ESCAPED_BYTE.test(line)) return line;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (const ch of line) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xdc80 && cp <= 0xdcff) bytes.push(cp - 0xdc00);
    else bytes.push(...enc.encode(ch));
  }
  return lossyUtf8.decode(new Uint8Array(bytes));
}
