import { describe, expect, test } from "bun:test";
import { escapeHtml, htmlToPlain } from "../../../modes/telegram/html.ts";

describe("html", () => {
  test("escaping and the plain-text fallback are inverse on text", () => {
    const text = `if (a < b && c > "d") { return '&amp;'; } <b>not bold</b>`;
    expect(htmlToPlain(`<b>title</b>\n<pre>${escapeHtml(text)}</pre>`)).toBe(`title\n${text}`);
    expect(htmlToPlain("a &#99999999; b")).toBe("a &#99999999; b");
  });
});
