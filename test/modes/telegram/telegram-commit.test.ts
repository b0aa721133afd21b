import { afterEach, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ScriptedModel } from "../../../ai/scripted-model.ts";
import { startTelegramBot, type TelegramBot } from "../../../modes/telegram/start-bot.ts";
import {
  callbackUpdate,
  messageUpdate,
  startFakeTelegram,
  type FakeTelegram,
  type StoredMessage,
  visibleText,
} from "../../support/fake-telegram-server.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

const OWNER = 4343;
const running: { fake: FakeTelegram; bot?: TelegramBot }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.bot?.stop();
    await r.fake.close();
  }
});

function git(cwd: string, ...args: string[]): string {
  const run = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

async function bot(commitButton: boolean) {
  const base = realpathSync(tempDir("pencil-tgcommit-"));
  const root = join(base, "ws");
  const home = join(base, "home");
  mkdirSync(root);
  mkdirSync(join(home, ".pencil"), { recursive: true });
  writeTree(root, { "c.txt": "see\n" });
  git(root, "init", "-q", "-b", "main");
  git(root, "config", "user.name", "Phone Owner");
  git(root, "config", "user.email", "phone@example.com");
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "initial");
  writeFileSync(join(home, ".pencil/settings.json"), JSON.stringify({ git: { commitButton } }));
  const fake = startFakeTelegram();
  const entry: { fake: FakeTelegram; bot?: TelegramBot } = { fake };
  running.push(entry);
  const model = new ScriptedModel([
    {
      toolCalls: [
        { name: "create_file", input: { path: "a.txt", content: "alpha\n" } },
        { name: "create_file", input: { path: "b.txt", content: "bee\n" } },
      ],
    },
    { text: "Created a.txt and b.txt." },
  ]);
  entry.bot = await startTelegramBot({
    env: {
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_OWNER_ID: String(OWNER),
      TELEGRAM_API_ROOT: fake.apiRoot,
      HOME: home,
    },
    workspace: root,
    pencilHome: join(home, ".pencil"),
    log: () => {},
    runOptions: () => ({
      models: { model, labels: [model.label], current: () => model.label, contextWindow: 100_000 },
    }),
    progressIntervalMs: 20,
  });
  fake.pushUpdate(messageUpdate(OWNER, "/agent create a and b"));
  const call = await fake.waitFor("sendMessage", (p) =>
    visibleText(String(p.text), p.parse_mode).includes("📝 Review"),
  );
  const card = [...fake.messages.values()].find((m) => m.chat_id === OWNER && m.text === call.payload.text)!;
  return { fake, root, card };
}

async function press(fake: FakeTelegram, card: StoredMessage, label: string): Promise<string> {
  const data = card.reply_markup?.inline_keyboard.flat().find((b: { text: string }) => b.text === label)?.callback_data;
  if (!data) throw new Error(`no button ${label}`);
  const update = callbackUpdate(OWNER, data, { chat_id: OWNER, message_id: card.message_id });
  fake.pushUpdate(update);
  const answer = await fake.waitFor(
    "answerCallbackQuery",
    (p) => p.callback_query_id === (update as any).callback_query.id,
    { timeoutMs: 15_000 },
  );
  return String(answer.payload.text ?? "");
}

test("with git.commitButton on, the card offers Approve all & commit: one commit of exactly the applied files, said on the card", async () => {
  const { fake, root, card } = await bot(true);
  const labels = card.reply_markup.inline_keyboard.flat().map((b: { text: string }) => b.text);
  expect(labels).toContain("✅ Approve all & commit");
  writeFileSync(join(root, "mine.txt"), "the owner's own work\n");
  const before = git(root, "rev-parse", "HEAD").trim();
  expect(await press(fake, card, "✅ Approve all & commit")).toBe("Approved 2 files.");
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("alpha\n");
  expect(git(root, "rev-list", "--count", `${before}..HEAD`).trim()).toBe("1");
  expect(git(root, "show", "--name-only", "--format=%an|%s", "HEAD").trim().split("\n")).toEqual([
    "Phone Owner|create a and b",
    "",
    "a.txt",
    "b.txt",
  ]);
  expect(git(root, "status", "--porcelain")).toBe("?? mine.txt\n");
  const now = fake.messages.get(`${card.chat_id}:${card.message_id}`)!;
  expect(visibleText(now.text, now.parse_mode)).toMatch(/Committed [0-9a-f]{12} on main: 2 file\(s\), not pushed\./);
});

test("without the setting there is no commit button, and Approve all commits nothing", async () => {
  const { fake, root, card } = await bot(false);
  const labels = card.reply_markup.inline_keyboard.flat().map((b: { text: string }) => b.text);
  expect(labels).not.toContain("✅ Approve all & commit");
  const before = git(root, "rev-parse", "HEAD").trim();
  expect(await press(fake, card, "✅ Approve all")).toBe("Approved 2 files.");
  expect(git(root, "rev-parse", "HEAD").trim()).toBe(before);
});
