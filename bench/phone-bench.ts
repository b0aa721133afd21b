// The phone workflow against the fake Bot API on 127.0.0.1 (the real grammY bot, the
// real Groq transcription client against a scripted transcription server). Figures:
//  1. voice note received → transcript card shown, median over NOTES notes, minus the
//     transcription call alone (the same client, bytes and server, called directly in
//     the same run): the harness overhead (target ≤ 150 ms); beside it the bare
//     round trip of a command and its reply;
//  2. bot memory with 5 listed workspaces, 20 pending changesets, every workspace
//     opened once through /projects and /status run in each: RSS of a child process
//     running only the bot (target ≤ 150 MiB).
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { finish, median, target } from "./stats.ts";

const OWNER = 4242;
const NOTES = 25;
const WORKSPACES = 5;
const PENDING = 20;
const MiB = 1024 * 1024;
/** About 30 KB: a few seconds of Opus, shaped like an OGG file. */
const VOICE = new Uint8Array([
  0x4f,
  0x67,
  0x67,
  0x53,
  0,
  2,
  ...Array.from({ length: 30_000 }, (_, i) => (i * 31) % 251),
]);

if (process.argv[2] === "--memory-child") await memoryChild(process.argv[3]!, process.argv[4]!);
else await main();

async function main(): Promise<void> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "pencil-phone-bench-")));
  try {
    const voice = await voiceOverhead(base);
    const memory = await botMemory(base);
    const overhead = voice.total - voice.transcribe;
    console.log("\nPhone bench");
    console.log(`  voice → transcript card   median ${voice.total.toFixed(1)} ms (${NOTES} notes)`);
    console.log(
      `  transcription call alone  median ${voice.transcribe.toFixed(1)} ms (same client, bytes and scripted server)`,
    );
    console.log(`  baseline: command → reply median ${voice.command.toFixed(1)} ms (/help through the fake API)`);
    target({
      name: "voice note → transcript card, the harness's overhead",
      value: overhead,
      unit: "ms",
      max: 150,
      baseline: { name: "the transcription call alone", value: voice.transcribe },
    });
    target({
      name: `bot RSS, ${WORKSPACES} workspaces opened, ${PENDING} pending changesets`,
      value: memory,
      unit: "MiB",
      max: 150,
    });
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  finish();
}

async function voiceOverhead(base: string): Promise<{ total: number; transcribe: number; command: number }> {
  const { startFakeTelegram, messageUpdate, mediaUpdate } = await import("../test/support/fake-telegram-server.ts");
  const { startFakeTranscriptionServer } = await import("../test/support/fake-transcription-server.ts");
  const { startTelegramBot } = await import("../modes/telegram/start-bot.ts");
  const { ScriptedModel } = await import("../ai/scripted-model.ts");
  const { resolveTranscriber } = await import("../ai/transcriber.ts");
  const root = join(base, "voice-ws");
  const home = join(base, "voice-home");
  mkdirSync(root, { recursive: true });
  mkdirSync(home, { recursive: true });
  const fake = startFakeTelegram();
  const stt = startFakeTranscriptionServer("groq", "add a hello function to src/x.ts");
  const env = { GROQ_API_KEY: "gsk_bench", GROQ_BASE_URL: stt.baseURL };
  const model = new ScriptedModel([]);
  const bot = await startTelegramBot({
    env: {
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_OWNER_ID: String(OWNER),
      TELEGRAM_API_ROOT: fake.apiRoot,
      HOME: home,
      ...env,
    },
    workspace: root,
    pencilHome: join(home, ".pencil"),
    log: () => {},
    runOptions: () => ({
      models: { model, labels: [model.label], current: () => model.label, contextWindow: 100_000 },
    }),
    pollTimeoutSeconds: 1,
  });
  const transcriber = resolveTranscriber(env)!;
  const total: number[] = [];
  const alone: number[] = [];
  const command: number[] = [];
  try {
    for (let i = 0; i < NOTES + 3; i++) {
      const fileId = fake.addFile(VOICE, { path: `voice/file_${i}.oga` });
      const from = fake.calls.length;
      const t0 = performance.now();
      fake.pushUpdate(
        mediaUpdate(OWNER, {
          voice: {
            file_id: fileId,
            file_unique_id: `u${i}`,
            duration: 4,
            mime_type: "audio/ogg",
            file_size: VOICE.length,
          },
        }),
      );
      await fake.waitFor("sendMessage", (p) => String(p.text).includes("I heard"), { from, timeoutMs: 10_000 });
      const t1 = performance.now();
      await transcriber.transcribe(VOICE);
      const t2 = performance.now();
      const helpFrom = fake.calls.length;
      fake.pushUpdate(messageUpdate(OWNER, "/help"));
      await fake.waitFor("sendMessage", (p) => String(p.text).includes("writes in pencil"), { from: helpFrom });
      const t3 = performance.now();
      if (i < 3) continue; // warm-up
      total.push(t1 - t0);
      alone.push(t2 - t1);
      command.push(t3 - t2);
    }
  } finally {
    await bot.stop();
    await fake.close();
    await stt.stop();
  }
  return { total: median(total), transcribe: median(alone), command: median(command) };
}

/** Median RSS of three children, each running the bot on a home with the workspaces and changesets. */
async function botMemory(base: string): Promise<number> {
  const { startFakeTelegram, messageUpdate, callbackUpdate } = await import("../test/support/fake-telegram-server.ts");
  const samples: number[] = [];
  for (let run = 0; run < 3; run++) {
    const home = join(base, `mem-home-${run}`);
    const roots = seed(home);
    const fake = startFakeTelegram();
    const child = Bun.spawn([process.execPath, import.meta.path, "--memory-child", fake.apiRoot, home], {
      stdout: "pipe",
      stdin: "pipe",
      stderr: "inherit",
    });
    const reader = child.stdout.getReader();
    let out = "";
    const readUntil = async (marker: string) => {
      while (!out.includes(marker)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`memory child ended early: ${out}`);
        out += new TextDecoder().decode(value);
      }
    };
    await readUntil("ready");
    // Open every workspace the way the owner would: /projects, a press, /status.
    for (let i = 0; i < roots.length; i++) {
      const from = fake.calls.length;
      fake.pushUpdate(messageUpdate(OWNER, "/projects"));
      const list = await fake.waitFor("sendMessage", (p) => String(p.text).includes("Tap one"), { from });
      const sent = fake.messagesIn(OWNER).find((m) => m.text === list.payload.text)!;
      const button = sent.reply_markup.inline_keyboard.flat().find((b: { text: string }) => b.text.endsWith(` p${i}`));
      const pressFrom = fake.calls.length;
      fake.pushUpdate(callbackUpdate(OWNER, button.callback_data, { chat_id: OWNER, message_id: sent.message_id }));
      await fake.waitFor("answerCallbackQuery", () => true, { from: pressFrom });
      const statusFrom = fake.calls.length;
      fake.pushUpdate(messageUpdate(OWNER, "/status"));
      await fake.waitFor("sendMessage", (p) => String(p.text).includes("Workspace"), { from: statusFrom });
    }
    child.stdin.write("measure\n");
    await child.stdin.flush();
    await readUntil("rss=");
    await readUntil("\n");
    await child.exited;
    await fake.close();
    samples.push(Number(/rss=(\d+)/.exec(out)![1]) / MiB);
  }
  return median(samples);
}

/** Five workspaces listed in the user's settings, four pending changesets of five 4 KB files in each. */
function seed(home: string): string[] {
  const pencilHome = join(home, ".pencil");
  mkdirSync(pencilHome, { recursive: true });
  const roots = Array.from({ length: WORKSPACES }, (_, i) => join(home, `p${i}`));
  for (const root of roots) mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(
    join(pencilHome, "settings.json"),
    JSON.stringify({ telegram: { workspaces: Object.fromEntries(roots.map((r, i) => [`p${i}`, r])) } }),
  );
  return roots;
}

/** Runs in a child: saves the pending changesets, starts the bot, waits for "measure", prints its RSS. */
async function memoryChild(apiRoot: string, home: string): Promise<void> {
  const { ChangesetStore } = await import("../core/staging/changeset-store.ts");
  const { makeChangeset } = await import("../test/fixtures/apply-changeset.ts");
  const { startTelegramBot } = await import("../modes/telegram/start-bot.ts");
  const { ScriptedModel } = await import("../ai/scripted-model.ts");
  const pencilHome = join(realpathSync(home), ".pencil");
  const store = new ChangesetStore(pencilHome);
  const roots = Array.from({ length: WORKSPACES }, (_, i) => join(realpathSync(home), `p${i}`));
  for (let n = 0; n < PENDING; n++) {
    const root = roots[n % WORKSPACES]!;
    const specs = Array.from({ length: 5 }, (_, f) => ({
      path: `src/c${n}-f${f}.ts`,
      after: new TextEncoder().encode(`export const v${n}_${f} = 1;\n`.repeat(150)),
    }));
    store.save(makeChangeset(root, specs, `cs-bench-${String(n).padStart(2, "0")}`));
  }
  const model = new ScriptedModel([]);
  const bot = await startTelegramBot({
    env: {
      TELEGRAM_BOT_TOKEN: "123456:TEST-token_abcdefghijklmnop",
      TELEGRAM_OWNER_ID: String(OWNER),
      TELEGRAM_API_ROOT: apiRoot,
      HOME: home,
    },
    workspace: roots[0]!,
    pencilHome,
    log: () => {},
    runOptions: () => ({
      models: { model, labels: [model.label], current: () => model.label, contextWindow: 100_000 },
    }),
    pollTimeoutSeconds: 1,
  });
  console.log("ready");
  for await (const line of console) if (line.trim() === "measure") break;
  Bun.gc(true);
  await Bun.sleep(200);
  console.log(`rss=${process.memoryUsage().rss}`);
  await bot.stop();
  process.exit(0);
}
