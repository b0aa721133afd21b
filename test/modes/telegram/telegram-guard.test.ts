import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { ChangesetStore } from "../../../core/staging/changeset-store.ts";
import { startTelegramBot, type TelegramBot } from "../../../modes/telegram/start-bot.ts";
import { ScriptedModel } from "../../../ai/scripted-model.ts";
import { makeChangeset } from "../../fixtures/apply-changeset.ts";
import {
  callbackUpdate,
  type FakeTelegram,
  messageUpdate,
  startFakeTelegram,
} from "../../support/fake-telegram-server.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

const OWNER = 4242;
const enc = (s: string) => new TextEncoder().encode(s);

interface Setup {
  fake: FakeTelegram;
  bot: TelegramBot;
  logs: string[];
  root: string;
  home: string;
}

const running: { fake: FakeTelegram; bot?: TelegramBot }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.bot?.stop();
    await r.fake.close();
  }
});

/** A workspace with one pending changeset already saved (so the bot starts by offering it, with real buttons). */
async function setup(options: { pending?: boolean } = {}): Promise<Setup> {
  const base = realpathSync(tempDir("pencil-tg-"));
  const root = join(base, "ws");
  const home = join(base, "home");
  mkdirSync(root);
  mkdirSync(home);
  writeTree(root, { "a.txt": "a\n" });
  if (options.pending !== false) {
    const cs = makeChangeset(root, [{ path: "a.txt", after: enc("A\n") }], "20250101-000000-aaaaaa");
    new ChangesetStore(join(home, ".pencil")).save(cs);
  }
  const fake = startFakeTelegram();
  running.push({ fake });
  const logs: string[] = [];
  const model = new ScriptedModel([]);
  const bot = await startTelegramBot({
    env: {
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_OWNER_ID: String(OWNER),
      TELEGRAM_API_ROOT: fake.apiRoot,
      HOME: home,
    },
    workspace: root,
    pencilHome: join(home, ".pencil"),
    log: (line) => logs.push(line),
    runOptions: () => ({ models: { model, labels: [model.label], current: () => model.label, contextWindow: 8192 } }),
  });
  running[running.length - 1]!.bot = bot;
  return { fake, bot, logs, root, home };
}

/** Sends the owner's /help and waits for its answer: every update pushed before it has been handled by then. */
async function barrier(fake: FakeTelegram): Promise<void> {
  const from = fake.calls.length;
  fake.pushUpdate(messageUpdate(OWNER, "/help"));
  await fake.waitFor("sendMessage", (p) => String(p.text).includes("writes in pencil"), { from });
}

describe("telegram bot: owner lock", () => {
  test("1,000 forged updates and presses from non-owners, groups, spoofed chats and random tokens: none acted on, none answered", async () => {
    const { fake, bot, logs, home } = await setup();
    await fake.waitFor("sendMessage", (p) => String(p.text).includes("waiting for review"));
    const discard = fake.findButton(OWNER, (t) => t.includes("Discard"))!;
    const review = fake.findButton(OWNER, (t) => t.includes("Review"))!;
    expect(discard).not.toBeNull();
    const tokenFile = join(home, ".pencil", "telegram", "tokens.json");
    const tokensBefore = readFileSync(tokenFile, "utf8");
    const heldBefore = bot.held();
    const callsBefore = fake.calls.length;
    const realData = [discard.button.callback_data, review.button.callback_data];
    const msg = { chat_id: OWNER, message_id: discard.message.message_id };

    const forged = [];
    for (let i = 0; i < 1000; i++) {
      const stranger = 10_000 + i;
      const data =
        i % 3 === 0
          ? realData[i % 2]!
          : i % 3 === 1
            ? `p1:${Math.random().toString(36).slice(2, 18).padEnd(16, "A")}`
            : `garbage-${i}`;
      switch (i % 8) {
        case 0:
          forged.push(messageUpdate(stranger, "/agent delete everything"));
          break;
        case 1:
          forged.push(messageUpdate(OWNER, "/agent from a group", { id: -1000 - i, type: "supergroup" }));
          break;
        case 2:
          forged.push(messageUpdate(stranger, "/cancel", { id: OWNER, type: "private" }));
          break;
        case 3:
          forged.push(callbackUpdate(stranger, data, msg));
          break;
        case 4:
          forged.push(callbackUpdate(stranger, data, { chat_id: stranger, message_id: 1 }));
          break;
        case 5:
          forged.push(callbackUpdate(OWNER, data, { chat_id: -77, message_id: 1 }));
          break;
        case 6:
          forged.push({
            channel_post: { message_id: i, date: 0, chat: { id: -200, type: "channel", title: "c" }, text: "/agent x" },
          } as any);
          break;
        default:
          forged.push({ edited_message: { ...(messageUpdate(OWNER, "/undo") as any).message } });
          break;
      }
    }
    for (const u of forged) fake.pushUpdate(u);
    await barrier(fake);

    const after = fake.calls.slice(callsBefore);
    expect(after.filter((c) => c.method === "answerCallbackQuery")).toEqual([]);
    expect(after.map((c) => c.method)).toEqual(["sendMessage"]); // only the owner's /help was answered
    expect(bot.held()).toEqual(heldBefore);
    expect(readFileSync(tokenFile, "utf8")).toBe(tokensBefore);
    expect(new ChangesetStore(join(home, ".pencil")).load("20250101-000000-aaaaaa").status).toBe("pending");
    const ignored = logs.filter((l) => l.startsWith("ignored"));
    expect(ignored.length).toBe(1000);
    expect(ignored.filter((l) => l.includes("from sender 10000 ")).length).toBe(1);
    expect(logs.join("\n")).not.toContain(fake.token.split(":")[1]!);
  }, 20_000);

  test("the owner's press of an unknown token is answered 'no longer pending' and changes nothing", async () => {
    const { fake, bot } = await setup();
    await fake.waitFor("sendMessage", (p) => String(p.text).includes("waiting for review"));
    const held = bot.held();
    const update = callbackUpdate(OWNER, "p1:AAAAAAAAAAAAAAAA", { chat_id: OWNER, message_id: 1 });
    fake.pushUpdate(update);
    const answer = await fake.waitFor(
      "answerCallbackQuery",
      (p) => p.callback_query_id === (update as any).callback_query.id,
    );
    expect(answer.payload.text).toBe("This is no longer pending.");
    expect(bot.held()).toEqual(held);
  });
});

describe("telegram bot: reliability", () => {
  test("a 429 on sendMessage is waited out (retry_after) and the message still arrives", async () => {
    const { fake } = await setup({ pending: false });
    fake.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 });
    const started = Date.now();
    await barrier(fake);
    const sends = fake.callsOf("sendMessage");
    expect(sends.map((c) => c.ok)).toEqual([false, true]);
    expect(sends[0]!.description).toContain("Too Many Requests");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  test("HTML Telegram refuses is sent again as plain text rather than lost", async () => {
    const { fake, logs } = await setup({ pending: false });
    fake.failNext("sendMessage", {
      error_code: 400,
      description: 'Bad Request: can\'t parse entities: Unsupported start tag "foo" at byte offset 3',
    });
    await fake.waitFor("setMyCommands");
    const from = fake.calls.length;
    fake.pushUpdate(messageUpdate(OWNER, "/help"));
    const plain = await fake.waitFor("sendMessage", (p) => p.parse_mode === undefined, { from });
    expect(plain.payload.text).toContain("✏️ Pencil writes in pencil");
    expect(plain.payload.text).not.toContain("<b>");
    expect(logs.some((l) => l.includes("sent it as plain text"))).toBe(true);
  });

  test("the command menu is set with every command of the contract", async () => {
    const { fake } = await setup({ pending: false });
    const call = await fake.waitFor("setMyCommands");
    expect(call.payload.commands.map((c: { command: string }) => c.command)).toEqual([
      "start",
      "help",
      "agent",
      "plan",
      "ask",
      "dump",
      "brain",
      "notes",
      "status",
      "cancel",
      "log",
      "undo",
      "projects",
      "new",
      "steps",
      "rewind",
      "model",
    ]);
  });
});

describe("telegram bot: startup", () => {
  test("a token Telegram refuses stops startup with a config error that does not show the token", async () => {
    const fake = startFakeTelegram("999999:SERVER-knows-another-token123");
    running.push({ fake });
    const token = "123456:WRONG-token-the-user-typed-abc";
    let error: any;
    try {
      await startTelegramBot({
        env: { TELEGRAM_BOT_TOKEN: token, TELEGRAM_OWNER_ID: "1", TELEGRAM_API_ROOT: fake.apiRoot },
        workspace: tempDir(),
        pencilHome: tempDir(),
        log: () => {},
        runOptions: () => ({
          models: { model: new ScriptedModel([]), labels: ["x"], current: () => "x", contextWindow: 1 },
        }),
      });
    } catch (e) {
      error = e;
    }
    expect(error?.name).toBe("TelegramConfigError");
    expect(error.message).toContain("401");
    expect(error.message).not.toContain("WRONG-token");
  });

  test("an unreachable API root fails with a clear message and no token", async () => {
    const token = "123456:UNREACHABLE-token-value-xyz";
    let error: any;
    try {
      await startTelegramBot({
        env: { TELEGRAM_BOT_TOKEN: token, TELEGRAM_OWNER_ID: "1", TELEGRAM_API_ROOT: "http://127.0.0.1:9" },
        workspace: tempDir(),
        pencilHome: tempDir(),
        log: () => {},
        runOptions: () => ({
          models: { model: new ScriptedModel([]), labels: ["x"], current: () => "x", contextWindow: 1 },
        }),
      });
    } catch (e) {
      error = e;
    }
    expect(error?.message).toContain("Cannot reach the Telegram Bot API at http://127.0.0.1:9");
    expect(error.message).not.toContain("UNREACHABLE-token");
  });

  test("no model configured stops startup with the variables to set, before any Telegram call", async () => {
    const fake = startFakeTelegram();
    running.push({ fake });
    const home = tempDir();
    await expect(
      startTelegramBot({
        env: { TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_OWNER_ID: "1", TELEGRAM_API_ROOT: fake.apiRoot, HOME: home },
        workspace: tempDir(),
        pencilHome: join(home, "p"),
        log: () => {},
      }),
    ).rejects.toThrow(/GROQ_API_KEY|LOCAL_LLM_BASE_URL/);
    expect(fake.calls).toEqual([]);
  });

  test("a missing owner id stops startup before any network call", async () => {
    await expect(
      startTelegramBot({ env: { TELEGRAM_BOT_TOKEN: "123456:TEST-token_abcdefghijklmnop" }, log: () => {} }),
    ).rejects.toThrow("TELEGRAM_OWNER_ID is not set");
  });
});
