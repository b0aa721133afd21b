import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { htmlToText } from "./html-text.ts";

/**
 * The main text of a web page, as a person would read it: Mozilla's Readability
 * (Firefox's reader view) picks the article and drops menus, footers and ads; its
 * cleaned article HTML is then laid out as text (headings, lists, links). A page
 * Readability finds no article in is read whole.
 */
export function readableText(html: string, url: string): { title?: string; text: string } {
  try {
    const { document } = parseHTML(html);
    const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], {
      charThreshold: 200,
    }).parse();
    if (article?.content && (article.textContent ?? "").trim().length > 0) {
      const text = htmlToText(article.content, url).text;
      const title = article.title?.trim() || htmlToText(html, url).title;
      return title ? { title, text } : { text };
    }
  } catch {
    // A page Readability cannot parse is read whole below.
  }
  return htmlToText(html, url);
}
