// HTML to readable text: a small tokenizer, not a full HTML parser. It drops
// scripts, styles and other non-text elements, keeps headings (as #), list
// items, table cells, preformatted blocks, and link text with its target.

const RAW_ELEMENTS = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "svg",
  "math",
  "iframe",
  "object",
  "embed",
  "canvas",
  "select",
  "title",
  "textarea",
]);
const PARAGRAPH = new Set(["p", "blockquote", "table", "ul", "ol", "dl", "figure", "form", "fieldset", "details"]);
const BLOCK = new Set([
  "div",
  "section",
  "article",
  "header",
  "footer",
  "nav",
  "main",
  "aside",
  "address",
  "figcaption",
  "summary",
  "caption",
  "dt",
  "body",
  "html",
]);
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/y;
// Whitespace inside <pre> is hidden behind private-use characters while the rest is collapsed.
const PRE_NEWLINE = "\uE000";
const PRE_SPACE = "\uE001";
const PRE_TAB = "\uE002";

/** Converts HTML to readable text (headings as `#`, links as `[text](url)` resolved against `baseUrl`), with its `<title>`. */
export function htmlToText(html: string, baseUrl?: string): { title?: string; text: string } {
  const titleMatch = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  const title = titleMatch ? decodeEntities(titleMatch[1]!).replace(/\s+/g, " ").trim().slice(0, 300) : "";
  const lower = html.toLowerCase();
  const out: string[] = [];
  const links: { start: number; href: string | null }[] = [];
  let pre = 0;
  let i = 0;
  const text = (raw: string) => {
    const decoded = decodeEntities(raw);
    out.push(
      pre > 0
        ? decoded.replace(/\r?\n/g, PRE_NEWLINE).replaceAll(" ", PRE_SPACE).replaceAll("\t", PRE_TAB)
        : decoded.replace(/\s+/g, " "),
    );
  };
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    if (lt === -1) {
      text(html.slice(i));
      break;
    }
    if (lt > i) text(html.slice(i, lt));
    if (html.startsWith("<!--", lt)) {
      const end = html.indexOf("-->", lt + 4);
      i = end === -1 ? html.length : end + 3;
      continue;
    }
    TAG.lastIndex = lt;
    const m = TAG.exec(html);
    if (!m) {
      if (html[lt + 1] === "!" || html[lt + 1] === "?") {
        const end = html.indexOf(">", lt);
        i = end === -1 ? html.length : end + 1;
      } else {
        out.push("<");
        i = lt + 1;
      }
      continue;
    }
    i = lt + m[0].length;
    const closing = m[1] === "/";
    const name = m[2]!.toLowerCase();
    const attrs = m[3] ?? "";
    if (!closing && RAW_ELEMENTS.has(name) && !attrs.trimEnd().endsWith("/")) {
      const end = lower.indexOf(`</${name}`, i);
      const close = end === -1 ? -1 : html.indexOf(">", end);
      i = close === -1 ? html.length : close + 1;
      continue;
    }
    const heading = /^h([1-6])$/.exec(name);
    if (heading) out.push(closing ? "\n\n" : `\n\n${"#".repeat(Number(heading[1]))} `);
    else if (PARAGRAPH.has(name)) out.push("\n\n");
    else if (BLOCK.has(name)) out.push("\n");
    else if (name === "br") out.push("\n");
    else if (name === "hr") out.push("\n\n---\n\n");
    else if (name === "li" || name === "tr") {
      // Only the start of an item or row breaks the line, so lists and tables stay compact.
      if (!closing) out.push(name === "li" ? "\n- " : "\n");
    } else if (name === "dd") out.push(closing ? "\n" : "\n  ");
    else if ((name === "td" || name === "th") && !closing) out.push(" | ");
    else if (name === "pre") {
      out.push(closing ? `${PRE_NEWLINE}\`\`\`\n` : "\n```" + PRE_NEWLINE);
      pre = Math.max(0, pre + (closing ? -1 : 1));
    } else if (name === "img" && !closing) {
      const alt = attribute(attrs, "alt");
      if (alt) out.push(` [image: ${alt}] `);
    } else if (name === "a") {
      if (!closing) links.push({ start: out.length, href: attribute(attrs, "href") });
      else closeLink(out, links.pop(), baseUrl);
    }
  }
  const body = out
    .join("")
    .replace(/[ \t]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n\| /g, "\n")
    .replace(/^\| /, "")
    .replace(/\n{3,}/g, "\n\n")
    .replaceAll(PRE_NEWLINE, "\n")
    .replaceAll(PRE_SPACE, " ")
    .replaceAll(PRE_TAB, "\t")
    .trim();
  return title ? { title, text: body } : { text: body };
}

function closeLink(out: string[], link: { start: number; href: string | null } | undefined, baseUrl?: string): void {
  if (!link || link.href === null) return;
  const inner = out.slice(link.start).join("").replace(/\s+/g, " ").trim();
  if (!inner) return;
  let target: URL;
  try {
    target = new URL(link.href, baseUrl);
  } catch {
    return;
  }
  if (target.protocol !== "http:" && target.protocol !== "https:") return;
  // Links to a spot on the same page add nothing for the reader.
  if (baseUrl && target.hash && target.href.split("#")[0] === baseUrl.split("#")[0]) return;
  if (inner === target.href) return;
  out.splice(link.start, out.length - link.start, `[${inner}](${target.href})`);
}

function attribute(attrs: string, name: string): string | null {
  const m = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(attrs);
  if (!m) return null;
  return decodeEntities(m[1] ?? m[2] ?? m[3] ?? "").trim();
}

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  copy: "©",
  reg: "®",
  trade: "™",
  mdash: "—",
  ndash: "–",
  hellip: "…",
  laquo: "«",
  raquo: "»",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  bull: "•",
  middot: "·",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  sect: "§",
  deg: "°",
  times: "×",
  divide: "÷",
  para: "¶",
  rarr: "→",
  larr: "←",
  uarr: "↑",
  darr: "↓",
  harr: "↔",
  shy: "",
  zwj: "",
  zwnj: "",
  ensp: " ",
  emsp: " ",
  thinsp: " ",
};

/** Decodes HTML character references: numeric ones and the common named ones. */
function decodeEntities(s: string): string {
  if (!s.includes("&")) return s;
  return s.replace(/&(#[0-9]{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,31});?/gi, (whole, ref: string) => {
    if (ref.startsWith("#")) {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\uFFFD";
      return String.fromCodePoint(code);
    }
    if (!whole.endsWith(";")) return whole;
    return NAMED[ref.toLowerCase()] ?? NAMED[ref] ?? whole;
  });
}
