import { afterEach, expect, test } from "bun:test";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../../support/fake-openai-server.ts";
import { message, OWNER, say, type TelegramWorld, telegramWorld, textOf, until } from "../../support/telegram-world.ts";

// While the model works the chat shows "typing…": Telegram shows the action for about five seconds,
// so it is sent again on a timer (shortened here) until the model's turn ends — however it ends.

const worlds: TelegramWorld[] = [];
const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.stop();
  for (const s of servers.splice(0)) await s.stop();
});

const RENEW_MS = 60;

async function bot(): Promise<{ w: TelegramWorld; groq: FakeOpenAIServer }> {
  const groq = await startFakeOpenAIServer();
  servers.push(groq);
  const w = telegramWorld([]);
  worlds.push(w);
  await w.start(
    { runOptions: () => ({}), typingRenewMs: RENEW_MS },
    { GROQ_API_KEY: "gsk_test", GROQ_BASE_URL: `${groq.url}/openai/v1` },
  );
  return { w, groq };
}

const typings = (w: TelegramWorld) =>
  w.fake.callsOf("sendChatAction").filter((c) => c.payload.chat_id === OWNER && c.payload.action === "typing").length;

/** The typing count once it has had time to grow, were its timer still running. */
async function settled(w: TelegramWorld): Promise<number> {
  const now = typings(w);
  await Bun.sleep(RENEW_MS * 6);
  return typings(w) - now;
}

test("typing is renewed while a slow model step runs, and stops when the run ends", async () => {
  const { w, groq } = await bot();
  groq.enqueue({ kind: "reply", text: "Slow answer.", delayMs: RENEW_MS * 12 });
  say(w.fake, "/ask take your time");
  await message(w.fake, (t) => t === "Slow answer.");
  // One at the step's start, then one per renewal while the model had not answered.
  expect(typings(w)).toBeGreaterThanOrEqual(4);
  expect(await settled(w)).toBe(0);
});

test("typing stops when the model fails, and when the run is cancelled", async () => {
  const { w, groq } = await bot();
  groq.enqueue({
    kind: "status",
    status: 400,
    body: { error: { message: "bad request", type: "invalid_request_error" } },
  });
  say(w.fake, "/ask fail please");
  const progress = () => w.fake.messagesIn(OWNER).find((m) => textOf(w.fake, m).includes("Ask: fail please"));
  await until(() => typings(w) >= 1, "the first typing action");
  await until(() => /⚠️|failed|could not/i.test(progress() ? textOf(w.fake, progress()!) : ""), "the failure");
  expect(await settled(w)).toBe(0);

  groq.enqueue({ kind: "hang" });
  const before = typings(w);
  say(w.fake, "/ask hang");
  await until(() => typings(w) >= before + 3, "typing renewed while the model hangs");
  say(w.fake, "/cancel");
  const cancelled = () => w.fake.messagesIn(OWNER).find((m) => textOf(w.fake, m).includes("Ask: hang"));
  await until(() => /stopped|cancel/i.test(cancelled() ? textOf(w.fake, cancelled()!) : ""), "the stop", 10_000);
  expect(await settled(w)).toBe(0);
}, 30_000);
