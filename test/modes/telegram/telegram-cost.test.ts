import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { messageUpdate } from "../../support/fake-telegram-server.ts";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../../support/fake-openai-server.ts";
import { message, OWNER, type TelegramWorld, telegramWorld, textOf, until } from "../../support/telegram-world.ts";

const worlds: TelegramWorld[] = [];
const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.stop();
  for (const s of servers.splice(0)) await s.stop();
});

describe("telegram: what a run cost", () => {
  test("each run's final message carries duration, model, tokens and the configured price; /status shows today's totals", async () => {
    const w = telegramWorld([{ text: "First answer." }, { text: "Second answer." }]);
    worlds.push(w);
    mkdirSync(w.pencilHome, { recursive: true });
    writeFileSync(
      join(w.pencilHome, "settings.json"),
      JSON.stringify({ telegram: { prices: { "scripted:demo": { input: 0.15, output: 0.75 } } } }),
    );
    await w.start();
    w.fake.pushUpdate(messageUpdate(OWNER, "/ask what is here?"));
    await message(w.fake, (t) => t === "First answer.");
    const progress = () => w.fake.messagesIn(OWNER).find((m) => textOf(w.fake, m).includes("Ask: what is here?"))!;
    await until(() => textOf(w.fake, progress()).includes("💰"), "the footer");
    expect(textOf(w.fake, progress())).toMatch(/💰 \d+\.\d s · scripted:demo · \d+ in \/ \d+ out · \$0\.0\d*/);
    w.fake.pushUpdate(messageUpdate(OWNER, "/ask and now?"));
    await message(w.fake, (t) => t === "Second answer.");
    const from = w.fake.calls.length;
    w.fake.pushUpdate(messageUpdate(OWNER, "/status"));
    const status = await message(w.fake, (t) => t.includes("Workspace"), from);
    expect(status.visible).toMatch(/Today: 2 runs · scripted:demo · \d+ in \/ \d+ out · \$/);
  });

  test("the price OpenRouter reports (usage accounting) is the cost when no price is configured", async () => {
    const openrouter = await startFakeOpenAIServer();
    servers.push(openrouter);
    openrouter.enqueue({ kind: "reply", text: "Priced answer.", cost: 0.00042 });
    const w = telegramWorld([]);
    worlds.push(w);
    await w.start(
      { runOptions: () => ({}) },
      { OPENROUTER_API_KEY: "or-test", OPENROUTER_BASE_URL: `${openrouter.url}/api/v1` },
    );
    w.fake.pushUpdate(messageUpdate(OWNER, "/ask price?"));
    await message(w.fake, (t) => t === "Priced answer.");
    expect(openrouter.requests[0]!.body.usage).toEqual({ include: true });
    const progress = w.fake.messagesIn(OWNER).find((m) => textOf(w.fake, m).includes("Ask: price?"))!;
    await until(() => textOf(w.fake, progress).includes("💰"), "the footer");
    expect(textOf(w.fake, progress)).toContain("openrouter:openai/gpt-oss-120b · 42 in / 4 out · $0.00042");
  });
});
