import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { costOf, formatDollars, usageLine } from "../../../app/run-cost.ts";
import { CostLedger } from "../../../modes/telegram/cost-ledger.ts";
import { messageUpdate } from "../../support/fake-telegram-server.ts";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../../support/fake-openai-server.ts";
import { message, OWNER, type TelegramWorld, telegramWorld, textOf, until } from "../../support/telegram-world.ts";

const worlds: TelegramWorld[] = [];
const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.stop();
  for (const s of servers.splice(0)) await s.stop();
});

describe("cost: pure parts", () => {
  const prices = { "groq:a": { input: 0.15, output: 0.75 }, "openrouter:b": { input: 1, output: 2 } };
  test.each([
    [{ "groq:a": { inputTokens: 1_000_000, outputTokens: 0 } }, 0.15],
    [{ "groq:a": { inputTokens: 0, outputTokens: 2_000_000 } }, 1.5],
    [
      {
        "groq:a": { inputTokens: 1000, outputTokens: 1000 },
        "openrouter:b": { inputTokens: 1000, outputTokens: 1000 },
      },
      0.0039,
    ],
    // A local model is free; an unpriced cloud model makes the cost unknown.
    [{ "local:c": { inputTokens: 10, outputTokens: 10 } }, 0],
    [{ "groq:unpriced": { inputTokens: 10, outputTokens: 10 } }, null],
    [{}, 0],
    [{ "openrouter:x": { inputTokens: 10, outputTokens: 10, steps: 2, reportedSteps: 2, reportedCost: 0.003 } }, 0.003],
    [{ "openrouter:x": { inputTokens: 10, outputTokens: 10, steps: 2, reportedSteps: 1, reportedCost: 0.001 } }, null],
    [{ "groq:a": { inputTokens: 1_000_000, outputTokens: 0, steps: 1, reportedSteps: 1, reportedCost: 9 } }, 0.15],
  ])("costOf(%j)", (usage, expected) => {
    const cost = costOf(usage, prices);
    if (expected === null) expect(cost).toBeNull();
    else expect(cost!).toBeCloseTo(expected, 10);
  });
  test.each([
    [0.0003912, "$0.00039"],
    [0.15, "$0.15"],
    [1.5, "$1.50"],
    [0, "$0"],
  ])("formatDollars(%p) = %p", (n, text) => expect(formatDollars(n)).toBe(text));
  test("a model without a price makes the cost unknown, never a guess; a model name that is an Object key is not a price", () => {
    expect(usageLine({ "groq:unpriced": { inputTokens: 1200, outputTokens: 340 } }, prices)).toBe(
      "groq:unpriced · 1.2k in / 340 out · cost: no price set",
    );
    expect(usageLine({ "local:c": { inputTokens: 1200, outputTokens: 340 } }, prices)).toBe(
      "local:c · 1.2k in / 340 out · $0",
    );
    expect(costOf({ constructor: { inputTokens: 1, outputTokens: 1 } }, prices)).toBeNull();
  });
  test("the ledger keeps today's totals across restarts", () => {
    const file = join(require("node:os").tmpdir(), `pencil-costs-${process.pid}-${Date.now()}.json`);
    const day = new Date("2026-12-01T10:00:00Z");
    new CostLedger(file, () => prices).add({ "groq:a": { inputTokens: 1000, outputTokens: 100 } }, day);
    const again = new CostLedger(file, () => prices);
    again.add({ "groq:a": { inputTokens: 1000, outputTokens: 100 } }, day);
    expect(again.today(day)).toBe("Today: 2 runs · groq:a · 2k in / 200 out · $0.00045");
    expect(again.today(new Date("2026-12-02T10:00:00Z"))).toBe("Today: no runs yet.");
  });
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
