import { describe, expect, test } from "bun:test";
import { htmlToText } from "../../../tools/web/html-text.ts";

describe("htmlToText", () => {
  test("drops scripts, styles and comments, keeps headings, lists, tables, code and links", () => {
    const html = `<html><head><title> A  &lt;Title&gt; </title><style>p{}</style></head><body>
      <nav><a href="/">Home</a> <a href="#top">Top</a></nav><!-- <p>hidden</p> -->
      <h2>Install</h2><p>Hello&nbsp;world &amp; friends &#x1F600; &#169; <a href="https://example.org/docs">the docs</a>.</p>
      <ul><li>one</li><li>two <b>bold</b></li></ul>
      <pre>  indented
    more</pre>
      <table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>
      <img src="x.png" alt="a cat"><noscript>enable js</noscript><script>var s = "</p>"; evil()</script>
      <a href="javascript:evil()">click</a><script>unclosed`;
    const { title, text } = htmlToText(html, "https://site.test/page");
    expect(title).toBe("A <Title>");
    expect(text).toBe(
      [
        "[Home](https://site.test/) Top",
        "",
        "## Install",
        "",
        "Hello world & friends 😀 © [the docs](https://example.org/docs).",
        "",
        "- one",
        "- two bold",
        "",
        "```",
        "  indented",
        "    more",
        "```",
        "",
        "A | B",
        "1 | 2",
        "",
        "[image: a cat] click",
      ].join("\n"),
    );
  });

  test("a page with no markup is its text", () => {
    expect(htmlToText("just  text\n here")).toEqual({ text: "just text here" });
  });
});
