import { afterEach, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeOpenAIServer, startFakeOpenAIServer, textReply } from "../../support/fake-openai-server.ts";
import type { TelegramBot } from "../../../modes/telegram/start-bot.ts";
import { message, say, type TelegramWorld, telegramWorld } from "../../support/telegram-world.ts";

const worlds: TelegramWorld[] = [];
const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.stop();
  for (const s of servers.splice(0)) await s.stop();
});

/** A bot on the real model client, talking to a fake Groq; `kimi` is known through the price table. */
async function botOnGroq(): Promise<{ w: TelegramWorld; groq: FakeOpenAIServer; start: () => Promise<TelegramBot> }> {
  const groq = await startFakeOpenAIServer();
  servers.push(groq);
  const w = telegramWorld([]);
  worlds.push(w);
  mkdirSync(w.pencilHome, { recursive: true });
  writeFileSync(
    join(w.pencilHome, "settings.json"),
    JSON.stringify({ telegram: { prices: { "groq:moonshotai/kimi-k2": { input: 1, output: 3 } } } }),
  );
  const start = () =>
    w.start({ runOptions: () => ({}) }, { GROQ_API_KEY: "gsk_test", GROQ_BASE_URL: `${groq.url}/openai/v1` });
  return { w, groq, start };
}

const modelsAsked = (groq: FakeOpenAIServer) => groq.requests.map((r) => JSON.parse(r.raw).model);

test("/model on the phone: shows the models, refuses an unknown name with the known ones, and switches the next runs (kept across a restart)", async () => {
  const { w, groq, start } = await botOnGroq();
  const bot = await start();

  say(w.fake, "/model");
  const shown = await message(w.fake, (t) => t.includes("Using"));
  expect(shown.visible).toContain("Using groq:openai/gpt-oss-120b");
  expect(shown.visible).toContain("groq:moonshotai/kimi-k2");

  say(w.fake, "/model moonshotai/kimi-k3");
  const refused = await message(w.fake, (t) => t.includes("Cannot use"));
  expect(refused.visible).toContain("moonshotai/kimi-k3");
  expect(refused.visible).toMatch(/Did you mean (groq:)?moonshotai\/kimi-k2\?/);
  expect(refused.visible).toContain("Known here: groq:openai/gpt-oss-120b");

  // Refused: the next run still uses the configured model.
  groq.enqueue(textReply("On the default."));
  say(w.fake, "/ask which model?");
  await message(w.fake, (t) => t === "On the default.");
  expect(modelsAsked(groq)).toEqual(["openai/gpt-oss-120b"]);

  say(w.fake, "/model moonshotai/kimi-k2");
  const switched = await message(w.fake, (t) => t.includes("Switched"));
  expect(switched.visible).toContain("groq:moonshotai/kimi-k2");

  // The session's next turn (plain text) and a new goal both use the model chosen.
  groq.enqueue(textReply("Follow-up on kimi."), textReply("New goal on kimi."));
  say(w.fake, "and in this session?");
  await message(w.fake, (t) => t === "Follow-up on kimi.");
  say(w.fake, "/ask a new goal");
  await message(w.fake, (t) => t === "New goal on kimi.");
  expect(modelsAsked(groq).slice(1)).toEqual(["moonshotai/kimi-k2", "moonshotai/kimi-k2"]);

  // A restarted bot keeps the choice.
  await bot.stop();
  await start();
  say(w.fake, "/model");
  const after = await message(w.fake, (t) => t.includes("Using groq:moonshotai"));
  expect(after.visible).toContain("Using groq:moonshotai/kimi-k2");
}, 30_000);

test("/model with a provider the configuration lacks says what to set, and changes nothing", async () => {
  const { w, groq, start } = await botOnGroq();
  await start();
  say(w.fake, "/model local:qwen");
  const refused = await message(w.fake, (t) => t.includes("Cannot use local:qwen"));
  expect(refused.visible).toContain("LOCAL_LLM_BASE_URL");
  groq.enqueue(textReply("Still the default."));
  say(w.fake, "/ask which?");
  await message(w.fake, (t) => t === "Still the default.");
  expect(modelsAsked(groq)).toEqual(["openai/gpt-oss-120b"]);
}, 30_000);
