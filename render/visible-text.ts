// Text from files, models and commands can carry terminal control sequences; nothing
// of it reaches a screen (or a phone) before passing through here.

/**
 * Code points that can move the cursor, repaint or reorder what a terminal shows:
 * C0/C1 controls (tab excepted), DEL, zero-width and bidi controls, line separators, BOM;
 * and U+10FF80–U+10FFFF, where core/text.ts's revealBytes puts the bytes of invalid UTF-8.
 */
export const UNSAFE =
  /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]|\udbff[\udf80-\udfff]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, "g");

/** The escaped, printable form of one unsafe code point (`\r`, `\n`, `\x1b`, `\u{202e}`). */
export function escapeChar(ch: string): string {
  if (ch === "\r") return "\\r";
  if (ch === "\n") return "\\n";
  const code = ch.codePointAt(0)!;
  // An invalid byte revealBytes kept visible: shown as the byte it was.
  if (code >= 0x10ff80 && code <= 0x10ffff) return `\\x${(code - 0x10ff00).toString(16)}`;
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
}

/** `text` with every terminal control character replaced by a visible escape, so it can never repaint the screen. */
export function visible(text: string): string {
  return text.replace(UNSAFE_ALL, escapeChar);
}
