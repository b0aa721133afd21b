// The Telegram bot against the fake Bot API on 127.0.0.1 (the real grammY bot, the
// real agent loop with a scripted model). Figures:
//  1. button press → approved file on disk, median over PRESSES presses (target ≤ 300 ms),
//     against the bare round trip of a command and its reply in the same run. The file is
//     too long for its card to show, so the first Approve all only delivers its diff (timed
//     apart); the press measured is the second, the one that applies;
//  2. idle bot memory: RSS of a child process running only the bot, after start and
//     one idle second (target ≤ 120 MiB), against a bare grammY bot in the same setup;
//  3. 10,000 forged updates (strangers, groups, spoofed chats, real and random button
//     tokens): held state and state files before/after (must be unchanged).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScriptedModel as Scripted, ScriptedTurn } from "../ai/scripted-model.ts";
import type { FakeTelegram } from "../test/support/fake-telegram-server.ts";
import { check, finish, median, percentile, target } from "./stats.ts";

// Modules load lazily, so that the idle-memory child holds only what it runs (the bare bot: grammY alone).
const lazy = {
  scripted: () => import("../ai/scripted-model.ts"),
  app: () => import("../app/apply-reviewed.ts"),
  runtime: () => import("../app/runtime.ts"),
  fixture: () => import("../test/fixtures/apply-changeset.ts"),
  fake: () => import("../test/support/fake-telegram-server.ts"),
  bot: () => import("../modes/telegram/start-bot.ts"),
};

let ScriptedModel: typeof import("../ai/scripted-model.ts").ScriptedModel;
let applyReviewed: typeof import("../app/apply-reviewed.ts").applyReviewed;
let createRuntime: typeof import("../app/runtime.ts").createRuntime;
let makeChangeset: typeof import("../test/fixtures/apply-changeset.ts").makeChangeset;
let callbackUpdate: typeof import("../test/support/fake-telegram-server.ts").callbackUpdate;
let messageUpdate: typeof import("../test/support/fake-telegram-server.ts").messageUpdate;
let startFakeTelegram: typeof import("../test/support/fake-telegram-server.ts").startFakeTelegram;
let startTelegramBot: typeof import("../modes/telegram/start-bot.ts").startTelegramBot;

const OWNER = 4242;
const PRESSES = 25;
const FORGED = 10_000;
const MiB = 1024 * 1024;
/** The staged file's content: 121 lines, too long to be shown inline on the card. */
const content = (i: number) => `file ${i}\n`.repeat(121);

if (process.argv[2] === "--idle-child") await idleChild(process.argv[3]!, process.argv[4]!, process.argv[5] === "bare");
else await main();

async function main(): Promise<void> {
  ({
    ScriptedModel,
    applyReviewed,
    createRuntime,
    makeChangeset,
    callbackUpdate,
    messageUpdate,
    startFakeTelegram,
    startTelegramBot,
  } = {
    ...(await lazy.scripted()),
    ...(await lazy.app()),
    ...(await lazy.runtime()),
    ...(await lazy.fixture()),
    ...(await lazy.fake()),
    ...(await lazy.bot()),
  });
  const base = realpathSync(mkdtempSync(join(tmpdir(), "pencil-tg-bench-")));
  try {
    const press = await pressToDisk(base);
    const alone = applyAlone(base);
    const memory = await idleMemory(base);
    const forged = await forgedUpdates(base);
    console.log("\nTelegram bench");
    console.log(
      `  press → file on disk     median ${press.median.toFixed(1)} ms (p90 ${press.p90.toFixed(1)} ms, ${PRESSES} applying presses)`,
    );
    console.log(
      `  diff-first press → answer median ${press.diffFirst.toFixed(1)} ms  (the first Approve all: diff delivered, nothing applied; ratio ${(press.diffFirst / press.baseline).toFixed(2)}× command → reply)`,
    );
    console.log(
      `  baseline: apply alone      median ${alone.toFixed(1)} ms  (same file, applyReviewed called directly; ratio ${(press.median / alone).toFixed(2)}×)`,
    );
    console.log(
      `  baseline: command → reply median ${press.baseline.toFixed(1)} ms  (/help through the fake API, no disk; ratio ${(press.median / press.baseline).toFixed(2)}×)`,
    );
    console.log(`  idle bot RSS             ${memory.pencil.toFixed(1)} MiB`);
    console.log(
      `  bare grammY bot RSS      ${memory.bare.toFixed(1)} MiB  (ratio ${(memory.pencil / memory.bare).toFixed(2)}×)`,
    );
    console.log(
      `  ${FORGED.toLocaleString("en-US")} forged updates    handled in ${forged.ms.toFixed(0)} ms, answered ${forged.answered}, acted on ${forged.acted}`,
    );
    console.log(`    held before ${JSON.stringify(forged.before)}`);
    console.log(`    held after  ${JSON.stringify(forged.after)}`);
    console.log(
      `    state files ${forged.filesBefore} → ${forged.filesAfter} bytes; RSS ${forged.rssBefore.toFixed(1)} → ${forged.rssAfter.toFixed(1)} MiB`,
    );
    const unchanged =
      JSON.stringify(forged.before) === JSON.stringify(forged.after) &&
      forged.filesBefore === forged.filesAfter &&
      forged.answered === 0 &&
      forged.acted === 0;
    target({
      name: "button press → approved file on disk",
      value: press.median,
      unit: "ms",
      max: 300,
      baseline: { name: "applyReviewed alone", value: alone },
    });
    target({
      name: "idle bot memory (RSS)",
      value: memory.pencil,
      unit: "MiB",
      max: 120,
      baseline: { name: "a bare grammY bot", value: memory.bare },
    });
    check(
      `${FORGED.toLocaleString("en-US")} forged updates: held state unchanged`,
      unchanged,
      `${forged.answered} answered, ${forged.acted} acted on, state ${unchanged ? "unchanged" : "CHANGED"}`,
      "nothing answered, acted on or held",
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  finish();
}

/** A fresh workspace and home under `base`. */
function dirs(base: string, name: string): { root: string; home: string } {
  const root = join(base, name, "ws");
  const home = join(base, name, "home");
  mkdirSync(root, { recursive: true });
  mkdirSync(home, { recursive: true });
  return { root, home };
}

function env(fake: FakeTelegram, home: string): Record<string, string> {
  return {
    TELEGRAM_BOT_TOKEN: fake.token,
    TELEGRAM_OWNER_ID: String(OWNER),
    TELEGRAM_API_ROOT: fake.apiRoot,
    HOME: home,
  };
}

function choice(model: Scripted) {
  return { models: { model, labels: [model.label], current: () => model.label, contextWindow: 100_000 } };
}

/** Presses the newest button whose label is `label`; resolves with the press's time (performance.now()). */
function pressButton(fake: FakeTelegram, label: string): number {
  const found = fake.findButton(OWNER, (t) => t === label);
  if (!found) throw new Error(`no ${label} button`);
  const at = performance.now();
  fake.pushUpdate(
    callbackUpdate(OWNER, found.button.callback_data, { chat_id: OWNER, message_id: found.message.message_id }),
  );
  return at;
}

async function pressToDisk(
  base: string,
): Promise<{ median: number; p90: number; baseline: number; diffFirst: number }> {
  const { root, home } = dirs(base, "press");
  const turns: ScriptedTurn[] = [];
  for (let i = 0; i < PRESSES; i++) {
    turns.push(
      { toolCalls: [{ name: "create_file", input: { path: `out/file${i}.txt`, content: content(i) } }] },
      { text: `made file ${i}` },
    );
  }
  const model = new ScriptedModel(turns);
  const fake = startFakeTelegram();
  const bot = await startTelegramBot({
    env: env(fake, home),
    workspace: root,
    pencilHome: join(home, ".pencil"),
    log: () => {},
    runOptions: () => choice(model),
  });
  const times: number[] = [];
  const baseline: number[] = [];
  const diffFirst: number[] = [];
  try {
    for (let i = 0; i < PRESSES; i++) {
      const from = fake.calls.length;
      fake.pushUpdate(messageUpdate(OWNER, `/agent make file ${i}`));
      await fake.waitFor("sendMessage", (p) => String(p.text).includes("📝 <b>Review</b>"), {
        from,
        timeoutMs: 10_000,
      });
      await Bun.sleep(20); // let the card's message settle, as a human would
      const target = join(root, "out", `file${i}.txt`);
      // First press: the diff was never shown, so it is delivered and nothing is applied.
      const firstFrom = fake.calls.length;
      const shownAt = pressButton(fake, "✅ Approve all");
      const first = await fake.waitFor("answerCallbackQuery", () => true, { from: firstFrom });
      diffFirst.push(performance.now() - shownAt);
      if (!String(first.payload.text).startsWith("Diff sent"))
        throw new Error(`the first press should deliver the diff, got: ${first.payload.text}`);
      if (existsSync(target)) throw new Error("a file was applied before its diff was shown");
      await Bun.sleep(20); // the owner reads the diff
      // The measured press: the second, which applies.
      const applyFrom = fake.calls.length;
      const at = pressButton(fake, "✅ Approve all");
      while (!existsSync(target)) await Bun.sleep(0.5);
      times.push(performance.now() - at);
      const applied = await fake.waitFor("answerCallbackQuery", () => true, { from: applyFrom });
      if (applied.payload.text !== "Approved 1 file.")
        throw new Error(`the second press should apply, got: ${applied.payload.text}`);

      const helpFrom = fake.calls.length;
      const sent = performance.now();
      fake.pushUpdate(messageUpdate(OWNER, "/help"));
      await fake.waitFor("sendMessage", (p) => String(p.text).includes("writes in pencil"), { from: helpFrom });
      baseline.push(performance.now() - sent);
    }
  } finally {
    await bot.stop();
    await fake.close();
  }
  return {
    median: median(times),
    p90: percentile(times, 0.9),
    baseline: median(baseline),
    diffFirst: median(diffFirst),
  };
}

/** The same apply without the bot: load the pending changeset from the store and applyReviewed it. */
function applyAlone(base: string): number {
  const { root, home } = dirs(base, "alone");
  const runtime = createRuntime({ workspace: root, env: { PENCIL_HOME: join(home, ".pencil"), HOME: home } });
  const times: number[] = [];
  for (let i = 0; i < PRESSES; i++) {
    const cs = makeChangeset(
      root,
      [{ path: `out/file${i}.txt`, after: new TextEncoder().encode(content(i)) }],
      `cs-alone-${i}`,
    );
    runtime.store.save(cs);
    const at = performance.now();
    applyReviewed(runtime, runtime.store.load(cs.id), [`out/file${i}.txt`], []);
    times.push(performance.now() - at);
  }
  return median(times);
}

async function idleMemory(base: string): Promise<{ pencil: number; bare: number }> {
  const measure = async (bare: boolean): Promise<number> => {
    const samples: number[] = [];
    for (let run = 0; run < 3; run++) {
      const { home } = dirs(base, `idle-${bare ? "bare" : "pencil"}-${run}`);
      const fake = startFakeTelegram();
      const child = Bun.spawn(
        [process.execPath, import.meta.path, "--idle-child", fake.apiRoot, home, bare ? "bare" : "pencil"],
        { stdout: "pipe", stderr: "inherit" },
      );
      const out = await new Response(child.stdout).text();
      await child.exited;
      await fake.close();
      const rss = Number(/rss=(\d+)/.exec(out)?.[1]);
      if (!Number.isFinite(rss)) throw new Error(`idle child printed no RSS: ${out}`);
      samples.push(rss / MiB);
    }
    return median(samples);
  };
  return { pencil: await measure(false), bare: await measure(true) };
}

/** Runs in a child process: starts the bot (or a bare grammY bot), idles a second, prints its RSS, stops. */
async function idleChild(apiRoot: string, home: string, bare: boolean): Promise<void> {
  const token = "123456:TEST-token_abcdefghijklmnop";
  let stop: () => Promise<void>;
  if (bare) {
    const { Bot } = await import("grammy");
    const bot = new Bot(token, { client: { apiRoot } });
    bot.command("help", (ctx) => ctx.reply("help"));
    await new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }));
    stop = () => bot.stop();
  } else {
    const { ScriptedModel: Model } = await lazy.scripted();
    const { startTelegramBot: start } = await lazy.bot();
    const root = join(home, "ws");
    mkdirSync(root, { recursive: true });
    const model = new Model([]);
    const bot = await start({
      env: { TELEGRAM_BOT_TOKEN: token, TELEGRAM_OWNER_ID: String(OWNER), TELEGRAM_API_ROOT: apiRoot, HOME: home },
      workspace: root,
      pencilHome: join(home, ".pencil"),
      log: () => {},
      runOptions: () => choice(model),
    });
    stop = () => bot.stop();
  }
  await Bun.sleep(1000);
  Bun.gc(true);
  console.log(`rss=${process.memoryUsage().rss}`);
  await stop();
  process.exit(0);
}

async function forgedUpdates(base: string) {
  const { root, home } = dirs(base, "forged");
  const model = new ScriptedModel([
    { toolCalls: [{ name: "create_file", input: { path: "a.txt", content: "a\n" } }] },
    { text: "staged a" },
  ]);
  const fake = startFakeTelegram();
  const pencilHome = join(home, ".pencil");
  const bot = await startTelegramBot({
    env: env(fake, home),
    workspace: root,
    pencilHome,
    log: () => {},
    runOptions: () => choice(model),
  });
  try {
    // A pending card, so that forged presses can carry real tokens.
    fake.pushUpdate(messageUpdate(OWNER, "/agent stage a"));
    await fake.waitFor("sendMessage", (p) => String(p.text).includes("📝 <b>Review</b>"), { timeoutMs: 10_000 });
    await Bun.sleep(50);
    const card = fake.findButton(OWNER, (t) => t === "✅ Approve all")!;
    const real = card.message.reply_markup.inline_keyboard
      .flat()
      .map((b: { callback_data: string }) => b.callback_data);
    const stateBytes = () =>
      ["tokens.json", "cards.json"]
        .map((f) => join(pencilHome, "telegram", f))
        .reduce((n, f) => n + (existsSync(f) ? readFileSync(f).length : 0), 0);
    Bun.gc(true);
    const before = bot.held();
    const filesBefore = stateBytes();
    const rssBefore = process.memoryUsage().rss / MiB;
    const callsBefore = fake.calls.length;

    const started = performance.now();
    for (let i = 0; i < FORGED; i++) {
      const stranger = 100_000 + i;
      const data = i % 2 === 0 ? real[i % real.length]! : `p1:${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
      switch (i % 5) {
        case 0:
          fake.pushUpdate(messageUpdate(stranger, "/agent rm -rf"));
          break;
        case 1:
          fake.pushUpdate(messageUpdate(OWNER, "/undo", { id: -1000 - i, type: "group" }));
          break;
        case 2:
          fake.pushUpdate(callbackUpdate(stranger, data, { chat_id: OWNER, message_id: card.message.message_id }));
          break;
        case 3:
          fake.pushUpdate(callbackUpdate(OWNER, data, { chat_id: -55, message_id: card.message.message_id }));
          break;
        default:
          fake.pushUpdate(messageUpdate(stranger, "approve", { id: OWNER, type: "private" }));
          break;
      }
    }
    const from = fake.calls.length;
    fake.pushUpdate(messageUpdate(OWNER, "/help"));
    await fake.waitFor("sendMessage", (p) => String(p.text).includes("writes in pencil"), { from, timeoutMs: 60_000 });
    const ms = performance.now() - started;
    Bun.gc(true);
    const after = fake.calls.slice(callsBefore);
    return {
      ms,
      before,
      after: bot.held(),
      filesBefore,
      filesAfter: stateBytes(),
      rssBefore,
      rssAfter: process.memoryUsage().rss / MiB,
      answered: after.filter((c) => c.method === "answerCallbackQuery").length,
      // Everything but the one /help reply would be an action on a forged update.
      acted: after.length - 1 + (existsSync(join(root, "a.txt")) ? 1 : 0),
    };
  } finally {
    await bot.stop();
    await fake.close();
  }
}
