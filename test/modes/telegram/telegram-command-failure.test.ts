import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { message, press, say, world } from "../../support/telegram-world.ts";

// On the phone, a failed command shows the lines around its first failure and its last
// lines, and the whole output is one button away.

const SCRIPT = [
  'console.log("TAP version 13");',
  'for (let i = 1; i <= 30; i++) console.log("ok " + i + " - passes " + i);',
  'console.log("not ok 31 - adds");',
  'console.log("  expected: 3");',
  'console.log("  actual: 2");',
  'for (let i = 32; i <= 60; i++) console.log("ok " + i + " - later " + i);',
  'console.log("# pass 59"); console.log("# fail 1");',
  "process.exit(1);",
].join("\n");

describe("telegram: a failed command", () => {
  test("its notice shows the failure and the totals; Full output sends the whole output", async () => {
    const command = `${process.execPath} fail.js`;
    const w = world(
      [{ toolCalls: [{ name: "run_command", input: { command } }] }, { text: "The test fails on adds." }],
      { "fail.js": SCRIPT },
    );
    mkdirSync(w.pencilHome, { recursive: true });
    writeFileSync(join(w.pencilHome, "settings.json"), JSON.stringify({ permissions: { allow: ["Run(*)"] } }));
    await w.start();
    say(w.fake, "/agent run the tests");
    const notice = await message(w.fake, (t) => t.includes("not ok 31"));
    expect(notice.visible).toContain("exit 1");
    expect(notice.visible).toContain("expected: 3");
    expect(notice.visible).toContain("# fail 1");
    expect(notice.visible).not.toContain("passes 15");
    await message(w.fake, (t) => t.includes("The test fails on adds."));
    const from = w.fake.calls.length;
    expect(await press(w.fake, "📄 Full output", notice)).toContain("full output");
    const sent = await w.fake.waitFor("sendDocument", () => true, { from });
    expect(String(sent.payload.caption)).toContain("fail.js");
    const files = [...w.fake.messages.values()].filter((m) => m.document);
    expect(files.length).toBe(1);
  });

  test("a passing command sends no notice", async () => {
    const command = `${process.execPath} -e "console.log('fine')"`;
    const w = world([{ toolCalls: [{ name: "run_command", input: { command } }] }, { text: "All good." }]);
    mkdirSync(w.pencilHome, { recursive: true });
    writeFileSync(join(w.pencilHome, "settings.json"), JSON.stringify({ permissions: { allow: ["Run(*)"] } }));
    await w.start();
    say(w.fake, "/agent run it");
    await message(w.fake, (t) => t.includes("All good."));
    expect(
      w.fake
        .messagesIn(4242)
        .some((m) =>
          m.reply_markup?.inline_keyboard?.flat().some((b: { text: string }) => b.text.includes("Full output")),
        ),
    ).toBe(false);
  });
});
