import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import {
  type FakeOpenAIServer,
  startFakeOpenAIServer,
  textReply,
  toolCallReply,
} from "../../support/fake-openai-server.ts";
import {
  callbackUpdate,
  type FakeTelegram,
  messageUpdate,
  startFakeTelegram,
  visibleText,
} from "../../support/fake-telegram-server.ts";
import { diffsSince, LONG_SCRIPT, OWNER, PAYLOAD } from "../../support/telegram-world.ts";
import { tempDir } from "../../support/temp.ts";
import { withTranspilerCache } from "../../support/transpiler-cache.ts";

/*
 * The real `./bin/pencil telegram` process against the fake Bot API and a local model
 * server: killed with SIGKILL at a chosen moment, started again, or left to find that
 * it can no longer poll (issue 16).
 */

const BIN = join(join(import.meta.dir, "../.."), "..", "bin", "pencil");

interface Proc {
  proc: ReturnType<typeof Bun.spawn>;
  stderr: () => string;
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

interface Setup {
  fake: FakeTelegram;
  llm: FakeOpenAIServer;
  root: string;
  home: string;
  spawn(): Proc;
}

async function setup(): Promise<Setup> {
  const base = realpathSync(tempDir("pencil-tgproc-"));
  const root = join(base, "ws");
  mkdirSync(root);
  const fake = startFakeTelegram();
  const llm = await startFakeOpenAIServer();
  cleanup.push(
    () => fake.close(),
    () => llm.stop(),
  );
  const home = join(base, "pencil-home");
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: base,
    PENCIL_HOME: home,
    PENCIL_WORKSPACE: root,
    TELEGRAM_BOT_TOKEN: fake.token,
    TELEGRAM_OWNER_ID: String(OWNER),
    TELEGRAM_API_ROOT: fake.apiRoot,
    LOCAL_LLM_BASE_URL: `${llm.url}/v1`,
    LOCAL_LLM_MODEL: "fake-local",
  };
  return {
    fake,
    llm,
    root,
    home,
    spawn() {
      const proc = Bun.spawn([BIN, "telegram"], {
        cwd: root,
        env: withTranspilerCache(env),
        stdin: "ignore",
        stdout: "ignore",
        stderr: "pipe",
      });
      let err = "";
      const decoder = new TextDecoder();
      void (async () => {
        for await (const chunk of proc.stderr as ReadableStream<Uint8Array>)
          err += decoder.decode(chunk, { stream: true });
      })();
      cleanup.push(() => {
        proc.kill("SIGKILL");
      });
      return { proc, stderr: () => err };
    },
  };
}

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/** The owner's latest message whose visible text passes `test`. */
function latest(fake: FakeTelegram, test: (text: string) => boolean) {
  return fake
    .messagesIn(OWNER)
    .reverse()
    .find((m) => test(visibleText(m.text, m.parse_mode)));
}

/** Presses the button labelled `label` on the card as it is now; returns the pushed update. */
function pressOn(fake: FakeTelegram, cardId: number, label: string) {
  const card = fake.messages.get(`${OWNER}:${cardId}`)!;
  const data = card.reply_markup.inline_keyboard.flat().find((b: { text: string }) => b.text === label).callback_data;
  const update = callbackUpdate(OWNER, data, { chat_id: OWNER, message_id: cardId });
  fake.pushUpdate(update);
  return update;
}

describe("telegram process: kill -9 and restart", () => {
  test("killed while answering the press that sent a diff, the restarted bot does not take that press, delivered again, as an approval", async () => {
    const s = await setup();
    const { fake, root } = s;
    const first = s.spawn();
    await until(() => fake.polls() >= 1, "the bot to poll");
    s.llm.enqueue(
      toolCallReply([{ name: "create_file", arguments: { path: "install.sh", content: LONG_SCRIPT } }]),
      textReply("made it"),
    );
    fake.pushUpdate(messageUpdate(OWNER, "/agent write an installer"));
    await until(() => latest(fake, (t) => t.includes("📝 Review")) !== undefined, "the card");
    const cardId = latest(fake, (t) => t.includes("📝 Review"))!.message_id;

    // The press's confirmation never reaches Telegram, and the bot dies while answering it.
    fake.loseConfirmations = true;
    fake.hangNext("answerCallbackQuery");
    const from = fake.calls.length;
    pressOn(fake, cardId, "✅ Approve 1");
    await until(() => fake.hanging().includes("answerCallbackQuery"), "the bot to answer the press");
    expect(diffsSince(fake, from).join("\n")).toContain(PAYLOAD);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    fake.loseConfirmations = false;

    const second = s.spawn();
    await until(() => latest(fake, (t) => t.includes("Pencil is back")) !== undefined, "the restarted bot");
    const help = fake.calls.length;
    fake.pushUpdate(messageUpdate(OWNER, "/help"));
    await fake.waitFor("sendMessage", (p) => String(p.text).includes("writes in pencil"), {
      from: help,
      timeoutMs: 15_000,
    });
    await until(() => fake.queued() === 0, "Telegram to hold nothing unconfirmed");
    expect(existsSync(join(root, "install.sh"))).toBe(false);
    expect(second.stderr()).toContain("already taken in once");

    // A press made now, on the card as the owner sees it, approves.
    const now = pressOn(fake, cardId, "✅ Approve 1");
    const answer = await fake.waitFor(
      "answerCallbackQuery",
      (p) => p.callback_query_id === (now as any).callback_query.id,
      { timeoutMs: 15_000 },
    );
    expect(answer.payload.text).toBe("Approved.");
    expect(readFileSync(join(root, "install.sh"), "utf8")).toBe(LONG_SCRIPT);
    second.proc.kill("SIGTERM");
    const code = await second.proc.exited;
    if (code !== 0) console.error("STDERR", second.stderr());
    expect(code).toBe(0);
  }, 60_000);

  test("a bot whose polling ends for good (the token was revoked: 401) exits 1 instead of living on deaf", async () => {
    const s = await setup();
    const { fake } = s;
    const bot = s.spawn();
    await until(() => fake.polls() >= 1, "the bot to poll");
    fake.failNext("getUpdates", { error_code: 401, description: "Unauthorized" });
    fake.pushUpdate(messageUpdate(OWNER, "/help")); // ends the waiting poll; the next one gets the 401
    const code = await Promise.race([bot.proc.exited, Bun.sleep(20_000).then(() => "still running")]);
    expect(code).toBe(1);
    expect(bot.stderr()).toContain("stopped polling");
    expect(bot.stderr()).not.toContain(fake.token.split(":")[1]!);
  }, 60_000);
});
