import { afterEach, describe, expect, test } from "bun:test";
import { markdownToTelegram } from "../../../modes/telegram/markdown-html.ts";
import { messageUpdate, visibleText } from "../../support/fake-telegram-server.ts";
import { message, OWNER, type TelegramWorld, telegramWorld, textOf, until } from "../../support/telegram-world.ts";

const worlds: TelegramWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.stop();
});

describe("final answers as Telegram HTML", () => {
  test("code blocks, inline code, bold and links; raw HTML and unsafe links shown as text", () => {
    const [html, ...rest] = markdownToTelegram(
      "# Fix\n\nUse **this** and `a<b`:\n\n```ts\nif (a < b) run();\n```\n\n<script>x</script>\n\n[ok](https://e.x/?a=1&b=2) [bad](javascript:alert(1))",
    );
    expect(rest).toEqual([]);
    expect(html).toContain('<pre><code class="language-ts">if (a &lt; b) run();</code></pre>');
    expect(html).toContain("<b>this</b>");
    expect(html).toContain("<code>a&lt;b</code>");
    expect(html).toContain('<a href="https://e.x/?a=1&amp;b=2">ok</a>');
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("javascript:");
    expect(visibleText(html!, "HTML")).toContain("<script>x</script>");
  });

  test("a long code block is cut into messages that each close and reopen it; no line is lost", () => {
    const lines = Array.from({ length: 400 }, (_, i) => `line ${i} ${"x".repeat(20)}`);
    const pieces = markdownToTelegram(`Here:\n\n\`\`\`\n${lines.join("\n")}\n\`\`\`\nDone.`);
    expect(pieces.length).toBeGreaterThan(1);
    for (const p of pieces) {
      expect(p.split("<pre>").length).toBe(p.split("</pre>").length);
      expect(visibleText(p, "HTML").length).toBeLessThanOrEqual(4096);
    }
    const all = pieces.map((p) => visibleText(p, "HTML")).join("\n");
    for (const line of lines) expect(all).toContain(line);
    expect(all).toContain("Done.");
  });

  test("through the bot: the progress says what the agent does in words, and the answer arrives as HTML Telegram accepts", async () => {
    const w = telegramWorld([
      { toolCalls: [{ name: "read_file", input: { path: "c.txt" } }] },
      { text: "It says:\n\n```text\nsee\n```\n\nAll **fine**." },
    ]);
    worlds.push(w);
    await w.start();
    w.fake.pushUpdate(messageUpdate(OWNER, "/ask what does c.txt say?"));
    const answer = await message(w.fake, (t) => t.includes("All fine."));
    expect(answer.text).toContain('<pre><code class="language-text">see</code></pre>');
    const progress = w.fake.messagesIn(OWNER).find((m) => textOf(w.fake, m).includes("Ask: what does c.txt say?"))!;
    await until(() => textOf(w.fake, progress).includes("✓ reading c.txt"), "the step in words");
  });
});
