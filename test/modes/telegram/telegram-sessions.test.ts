import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { ScriptedModel, type ScriptedTurn } from "../../../ai/scripted-model.ts";
import { ChangesetStore } from "../../../core/changeset-store.ts";
import { startTelegramBot, type TelegramBot, type TelegramBotOptions } from "../../../modes/telegram/start-bot.ts";
import {
  callbackUpdate,
  type FakeTelegram,
  messageUpdate,
  startFakeTelegram,
  type StoredMessage,
  visibleText,
} from "../../support/fake-telegram-server.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

const OWNER = 4242;

const running: { fake: FakeTelegram; bots: TelegramBot[] }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    for (const bot of r.bots) await bot.stop();
    await r.fake.close();
  }
});

interface World {
  fake: FakeTelegram;
  root: string;
  pencilHome: string;
  logs: string[];
  model: ScriptedModel;
  start(extra?: Partial<TelegramBotOptions>): Promise<TelegramBot>;
}

/** A workspace, a fake Telegram, and a scripted model playing `turns` across every run of the bot. */
function world(turns: ScriptedTurn[], files: Record<string, string> = { "c.txt": "see\n" }): World {
  const base = realpathSync(tempDir("pencil-tgflow-"));
  const root = join(base, "ws");
  const home = join(base, "home");
  mkdirSync(root);
  mkdirSync(home);
  writeTree(root, files);
  const fake = startFakeTelegram();
  const entry = { fake, bots: [] as TelegramBot[] };
  running.push(entry);
  const logs: string[] = [];
  const model = new ScriptedModel(turns);
  const pencilHome = join(home, ".pencil");
  return {
    fake,
    root,
    pencilHome,
    logs,
    model,
    async start(extra = {}) {
      const bot = await startTelegramBot({
        env: {
          TELEGRAM_BOT_TOKEN: fake.token,
          TELEGRAM_OWNER_ID: String(OWNER),
          TELEGRAM_API_ROOT: fake.apiRoot,
          HOME: home,
        },
        workspace: root,
        pencilHome,
        log: (line) => logs.push(line),
        runOptions: () => ({
          models: { model, labels: [model.label], current: () => model.label, contextWindow: 100_000 },
        }),
        progressIntervalMs: 20,
        ...extra,
      });
      entry.bots.push(bot);
      return bot;
    },
  };
}

/** The owner sends a message; resolves once it is queued. */
function say(fake: FakeTelegram, text: string, extra: object = {}): void {
  fake.pushUpdate(messageUpdate(OWNER, text, undefined, extra));
}

/** Presses the newest button whose label passes `label` (or the given one) and returns the answer the bot gave. */
async function press(fake: FakeTelegram, label: string | RegExp, on?: StoredMessage): Promise<string> {
  const test = (t: string) => (typeof label === "string" ? t === label : label.test(t));
  let data: string | undefined;
  let message: StoredMessage | undefined;
  if (on) {
    message = on;
    data = on.reply_markup?.inline_keyboard.flat().find((b: { text: string }) => test(b.text))?.callback_data;
  } else {
    const found = fake.findButton(OWNER, test);
    data = found?.button.callback_data;
    message = found?.message;
  }
  if (!data || !message)
    throw new Error(
      `no button ${label} in: ${fake
        .messagesIn(OWNER)
        .map((m) => JSON.stringify(m.reply_markup?.inline_keyboard?.flat().map((b: { text: string }) => b.text) ?? []))
        .join(" ")}`,
    );
  const update = callbackUpdate(OWNER, data, { chat_id: OWNER, message_id: message.message_id });
  fake.pushUpdate(update);
  const id = (update as any).callback_query.id;
  const answer = await fake.waitFor("answerCallbackQuery", (p) => p.callback_query_id === id, { timeoutMs: 15_000 });
  return String(answer.payload.text ?? "");
}

/** A message as the owner sees it: its visible text (HTML parsed), buttons and ids. */
interface Seen extends StoredMessage {
  visible: string;
}

/** Waits for a sent message whose visible text passes `test`, sent at or after call index `from`. */
async function message(fake: FakeTelegram, test: (text: string) => boolean, from = 0): Promise<Seen> {
  const call = await fake.waitFor("sendMessage", (p) => test(visibleText(String(p.text), p.parse_mode)), { from });
  const stored = [...fake.messages.values()].find((m) => m.chat_id === OWNER && m.text === call.payload.text);
  if (!stored) throw new Error("message vanished");
  return { ...stored, visible: visibleText(stored.text, stored.parse_mode) };
}

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

const create = (path: string, content: string): ScriptedTurn => ({
  toolCalls: [{ name: "create_file", input: { path, content } }],
});
const promptText = (w: World, i: number) => JSON.stringify(w.model.prompts[i]);

describe("telegram sessions", () => {
  test("plain text after a run is a follow-up that sees the earlier turn; a goal sent while pending is held with buttons", async () => {
    const w = world(
      [
        create("c.txt", "gamma\n"),
        { text: "Made c." },
        create("d.txt", "delta\n"),
        { text: "Made d." },
        { text: "Noted the new goal." },
      ],
      { "a.txt": "alpha\n" },
    );
    await w.start();
    const { fake } = w;
    say(fake, "/agent make c");
    await message(fake, (t) => t.includes("📝 Review") && t.includes("c.txt"));

    let from = fake.calls.length;
    say(fake, "also make d");
    const second = await message(fake, (t) => t.includes("📝 Review") && t.includes("d.txt"), from);
    expect(second.visible).toContain("c.txt");
    const followUp = promptText(w, 2);
    expect(followUp).toContain("make c");
    expect(followUp).toContain("Made c.");
    expect(followUp).toContain("also make d");
    // One pending changeset, grown: not a second one.
    expect(new ChangesetStore(w.pencilHome).list().filter((cs) => cs.status === "pending").length).toBe(1);

    from = fake.calls.length;
    say(fake, "/agent rename everything");
    const held = await message(fake, (t) => t.includes("Your goal is kept"), from);
    expect(held.visible).toContain("rename everything");
    const labels = held.reply_markup.inline_keyboard.flat().map((b: { text: string }) => b.text);
    expect(labels).toEqual(["▶️ Continue with it pending", "📝 Review first", "🗑 Discard it"]);
    await press(fake, "▶️ Continue with it pending", held);
    await until(() => w.model.prompts.length === 5, "the held goal to run");
    const continued = promptText(w, 4);
    expect(continued).toContain("rename everything");
    expect(continued).toContain("also make d");
  }, 30_000);

  test("/new starts a fresh session; /steps lists checkpoints and Rewind takes the pending changes back", async () => {
    const w = world(
      [create("c.txt", "gamma\n"), create("d.txt", "delta\n"), { text: "Made two." }, { text: "Fresh start." }],
      { "a.txt": "alpha\n" },
    );
    await w.start();
    const { fake } = w;
    say(fake, "/agent make two files");
    await message(fake, (t) => t.includes("📝 Review") && t.includes("d.txt"));

    let from = fake.calls.length;
    say(fake, "/steps");
    const steps = await message(fake, (t) => t.includes("Steps"), from);
    expect(steps.visible).toMatch(/1 .*create_file[\s\S]*c\.txt[\s\S]*2 .*create_file[\s\S]*d\.txt/);
    from = fake.calls.length;
    await press(fake, "⏪ Rewind to 1", steps);
    const card = await message(fake, (t) => t.includes("📝 Review"), from);
    expect(card.visible).toContain("c.txt");
    expect(card.visible).not.toContain("d.txt");
    const pending = new ChangesetStore(w.pencilHome).list().filter((cs) => cs.status === "pending");
    expect(pending.map((cs) => cs.files.map((f) => f.path))).toEqual([["c.txt"]]);

    say(fake, "/new");
    await message(fake, (t) => t.includes("fresh session"));
    from = fake.calls.length;
    say(fake, "start over please");
    // c.txt is still pending: the goal is held until the owner says what to do with it.
    const held = await message(fake, (t) => t.includes("Your goal is kept"), from);
    await press(fake, "🗑 Discard it", held);
    await until(() => w.model.prompts.length === 4, "the fresh run");
    const fresh = promptText(w, 3);
    expect(fresh).toContain("start over please");
    expect(fresh).not.toContain("make two files");
    expect(new ChangesetStore(w.pencilHome).list().filter((cs) => cs.status === "pending").length).toBe(0);
  }, 30_000);
});
