/** Text made safe inside Telegram HTML: `&`, `<`, `>` and `"` escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The tags Telegram's HTML knows; anything else that looks like a tag is left as text by the fallback. */
const TAG = /<\/?(?:b|strong|i|em|u|ins|s|strike|del|code|pre|a|span|tg-spoiler|tg-emoji|blockquote)(?:\s[^<>]*)?>/gi;

/** What Telegram HTML shows as plain text: tags dropped, entities decoded (the fallback when HTML is refused). */
export function htmlToPlain(html: string): string {
  return html.replace(TAG, "").replace(/&(lt|gt|quot|amp|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g, (whole, name: string) => {
    if (name === "lt") return "<";
    if (name === "gt") return ">";
    if (name === "quot") return '"';
    if (name === "amp") return "&";
    const code = name.startsWith("#x") ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}
