import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import {
  hangReply,
  startFakeOpenAIServer,
  toolCallReply,
  type FakeOpenAIServer,
} from "../../support/fake-openai-server.ts";
import {
  messageUpdate,
  startFakeTelegram,
  type FakeTelegram,
  visibleText,
} from "../../support/fake-telegram-server.ts";
import { tempDir, writeTree } from "../../support/temp.ts";
import { withTranspilerCache } from "../../support/transpiler-cache.ts";

// Issue 16 item 2: the real `./bin/pencil telegram` process, killed with SIGKILL while
// its agent runs, against the fake Bot API and the fake model server. The restarted
// bot must say which run was interrupted, offer what it staged, and close the stale
// progress message.

const OWNER = 4242;
const PENCIL = join(join(import.meta.dir, "../.."), "..", "bin", "pencil");
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Starts the bot and resolves once it polls (its log line says so). */
async function spawnBot(env: Record<string, string>, root: string) {
  const proc = Bun.spawn([PENCIL, "telegram"], {
    cwd: root,
    env: withTranspilerCache(env),
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  cleanups.push(async () => {
    proc.kill("SIGKILL");
    await proc.exited;
  });
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  let log = "";
  const deadline = Date.now() + 15_000;
  while (!log.includes("is polling") && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the bot exited before polling:\n${log}`);
    log += decoder.decode(value);
  }
  // Keep draining its log so the pipe never fills.
  void (async () => {
    for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return;
  })();
  return proc;
}

test("kill -9 of the bot mid-run: on restart the owner is told which run, its staged files come as a card, and the progress message is closed", async () => {
  const base = realpathSync(tempDir("pencil-tgkill-"));
  const root = join(base, "ws");
  const home = join(base, "home");
  mkdirSync(root);
  mkdirSync(home);
  writeTree(root, { "a.txt": "alpha\n" });
  const fake: FakeTelegram = startFakeTelegram();
  cleanups.push(() => fake.close());
  const groq: FakeOpenAIServer = await startFakeOpenAIServer();
  cleanups.push(() => groq.stop());
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    PENCIL_HOME: join(home, ".pencil"),
    PENCIL_WORKSPACE: root,
    TELEGRAM_BOT_TOKEN: fake.token,
    TELEGRAM_OWNER_ID: String(OWNER),
    TELEGRAM_API_ROOT: fake.apiRoot,
    GROQ_API_KEY: "gsk_test_key",
    GROQ_BASE_URL: `${groq.url}/openai/v1`,
  };
  groq.enqueue(
    toolCallReply([{ name: "create_file", arguments: { path: "c.txt", content: "gamma\n" } }]),
    toolCallReply([{ name: "create_file", arguments: { path: "d.txt", content: "delta\n" } }]),
    hangReply(),
  );

  const first = await spawnBot(env, root);
  fake.pushUpdate(messageUpdate(OWNER, "/agent make three files"));
  const deadline = Date.now() + 15_000;
  while (groq.requests.length < 3 && Date.now() < deadline) await Bun.sleep(50);
  expect(groq.requests.length).toBe(3);
  const progress = fake.messagesIn(OWNER).find((m) => visibleText(m.text, m.parse_mode).includes("make three files"))!;
  expect(progress.text).toContain("⏳");
  first.kill("SIGKILL");
  await first.exited;

  const from = fake.calls.length;
  await spawnBot(env, root);
  const notice = await fake.waitFor("sendMessage", (p) => String(p.text).includes("A run was interrupted"), {
    from,
    timeoutMs: 15_000,
  });
  expect(visibleText(notice.payload.text, "HTML")).toContain("make three files");
  expect(visibleText(notice.payload.text, "HTML")).toContain("staged 2 files");
  const card = await fake.waitFor("sendMessage", (p) => JSON.stringify(p.reply_markup ?? {}).includes("Approve"), {
    from,
    timeoutMs: 15_000,
  });
  const cardText = visibleText(card.payload.text, "HTML");
  expect(cardText).toContain("c.txt");
  expect(cardText).toContain("d.txt");
  // The stale progress message no longer says it is going.
  const closed = fake.messages.get(`${progress.chat_id}:${progress.message_id}`)!;
  expect(closed.text).toContain("Interrupted");
  expect(closed.text).not.toContain("⏳");
  // Nothing was written to the workspace.
  expect(existsSync(join(root, "c.txt"))).toBe(false);

  // Plain text continues the interrupted session: the model sees its goal and the steps it finished.
  groq.enqueue({ kind: "reply", text: "Picking up where I was." });
  fake.pushUpdate(messageUpdate(OWNER, "go on please"));
  const end = Date.now() + 15_000;
  while (groq.requests.length < 4 && Date.now() < end) await Bun.sleep(50);
  const request = groq.requests[3]!.raw;
  expect(request).toContain("make three files");
  expect(request).toContain("Staged create: d.txt");
  expect(request).toContain("go on please");
}, 60_000);
