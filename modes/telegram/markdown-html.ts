import { escapeHtml } from "./html.ts";
import { splitAtLines } from "./split-text.ts";

/** Markdown per message before rendering: leaves room under Telegram's 4,096 characters for the tags' text. */
const PIECE_CHARS = 3500;
const FENCE = /^\s{0,3}(`{3,}|~{3,})(.*)$/;

/** A link Telegram may open: http(s) only. */
function safeHref(href: string): string | null {
  return /^https?:\/\//i.test(href)
    ? href.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    : null;
}

/** Telegram's HTML subset for each markdown element (Bun's parser; text always escaped, raw HTML shown as text). */
const CALLBACKS = {
  text: (t: string) => escapeHtml(t),
  // Raw HTML reaches us through `text` already escaped: it is shown as text.
  html: (t: string) => t,
  heading: (c: string) => `<b>${c}</b>\n\n`,
  paragraph: (c: string) => `${c}\n\n`,
  blockquote: (c: string) => `<blockquote>${c.trim()}</blockquote>\n\n`,
  code: (c: string, meta?: { language?: string }) => {
    const lang = meta?.language && /^[\w+#.-]{1,20}$/.test(meta.language) ? ` class="language-${meta.language}"` : "";
    return `<pre><code${lang}>${c.replace(/\n$/, "")}</code></pre>\n\n`;
  },
  list: (c: string) => `${c}\n`,
  listItem: (
    c: string,
    meta: { index: number; depth: number; ordered: boolean; start?: number; checked?: boolean },
  ) => {
    const mark =
      meta.checked === true
        ? "☑"
        : meta.checked === false
          ? "☐"
          : meta.ordered
            ? `${(meta.start ?? 1) + meta.index}.`
            : "•";
    return `${"  ".repeat(meta.depth)}${mark} ${c.trim()}\n`;
  },
  hr: () => "———\n\n",
  table: (c: string) => `${c}\n`,
  thead: (c: string) => c,
  tbody: (c: string) => c,
  tr: (c: string) => `${c.replace(/ \| $/, "")}\n`,
  th: (c: string) => `<b>${c}</b> | `,
  td: (c: string) => `${c} | `,
  strong: (c: string) => `<b>${c}</b>`,
  emphasis: (c: string) => `<i>${c}</i>`,
  strikethrough: (c: string) => `<s>${c}</s>`,
  codespan: (c: string) => `<code>${c}</code>`,
  link: (c: string, meta: { href: string }) => {
    const href = safeHref(meta.href);
    return href ? `<a href="${href}">${c}</a>` : c;
  },
  image: (c: string) => c,
};

/**
 * The model's markdown as Telegram HTML messages: code blocks as `<pre><code>`,
 * bold, italics, inline code, links, lists and quotes in Telegram's subset. Long
 * answers are cut at line breaks; a code block cut in two is closed and reopened,
 * so every message is well-formed on its own. Nothing is dropped.
 */
export function markdownToTelegram(markdown: string): string[] {
  const pieces = reopenFences(splitAtLines(markdown, PIECE_CHARS));
  return pieces
    .map((piece) => {
      try {
        return Bun.markdown.render(piece, CALLBACKS).trim();
      } catch {
        return escapeHtml(piece).trim();
      }
    })
    .filter((html) => html.length > 0);
}

/** Closes a fence left open at the end of a piece and opens it again at the start of the next one. */
function reopenFences(pieces: string[]): string[] {
  const out: string[] = [];
  let open: string | null = null;
  for (const piece of pieces) {
    let text = open ? `${open}\n${piece}` : piece;
    for (const line of piece.split("\n")) {
      const m = FENCE.exec(line);
      if (!m) continue;
      if (open === null) open = line.trim();
      else if (line.trim().startsWith(open.match(/^(`{3,}|~{3,})/)![1]!) && m[2]!.trim() === "") open = null;
    }
    if (open) text = `${text.replace(/\n?$/, "\n")}${open.match(/^(`{3,}|~{3,})/)![1]}`;
    out.push(text);
  }
  return out;
}
