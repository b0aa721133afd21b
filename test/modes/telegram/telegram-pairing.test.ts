import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ScriptedModel } from "../../../ai/scripted-model.ts";
import { TelegramConfigError } from "../../../core/errors/telegram-config-error.ts";
import { Pairing, newPairingCode, type PairedOwner } from "../../../modes/telegram/pairing.ts";
import { startTelegramBot, type TelegramBot } from "../../../modes/telegram/start-bot.ts";
import { INDEX, plain, runCli } from "../../support/cli.ts";
import { type FakeTelegram, messageUpdate, startFakeTelegram } from "../../support/fake-telegram-server.ts";
import { tempDir } from "../../support/temp.ts";
import { withTranspilerCache } from "../../support/transpiler-cache.ts";

/*
 * Pairing the phone in one step: the real bot against the fake Bot API, with no
 * TELEGRAM_OWNER_ID, and the real `pencil telegram` in a pseudo-terminal.
 */

const OWNER = 777;
const STRANGER = 666;
const running: { fake: FakeTelegram; bots: TelegramBot[] }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    for (const bot of r.bots) await bot.stop();
    await r.fake.close();
  }
});

interface PairingWorld {
  fake: FakeTelegram;
  home: string;
  root: string;
  logs: string[];
  code: Promise<string>;
  paired: PairedOwner[];
  started: Promise<TelegramBot>;
}

/** Starts the bot with a token and no owner: it pairs before anything else. */
function pairingWorld(options: { envLines?: string; replace?: boolean; owner?: number } = {}): PairingWorld {
  const base = realpathSync(tempDir("pencil-pair-"));
  const root = join(base, "ws");
  const home = join(base, "pencil-home");
  mkdirSync(root);
  mkdirSync(home);
  if (options.envLines !== undefined) writeFileSync(join(home, ".env"), options.envLines, { mode: 0o644 });
  const fake = startFakeTelegram();
  const entry = { fake, bots: [] as TelegramBot[] };
  running.push(entry);
  const logs: string[] = [];
  const paired: PairedOwner[] = [];
  let gotCode: (code: string) => void = () => {};
  const code = new Promise<string>((resolve) => {
    gotCode = resolve;
  });
  const model = new ScriptedModel([]);
  const started = startTelegramBot({
    env: {
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.apiRoot,
      HOME: base,
      ...(options.owner ? { TELEGRAM_OWNER_ID: String(options.owner) } : {}),
    },
    workspace: root,
    pencilHome: home,
    log: (line) => logs.push(line),
    pollTimeoutSeconds: 1,
    runOptions: () => ({ models: { model, labels: [model.label], current: () => model.label, contextWindow: 8192 } }),
    pairing: {
      ...(options.replace ? { replace: true } : {}),
      onCode: (c) => gotCode(c),
      onPaired: (owner) => paired.push(owner),
    },
  });
  started.then((bot) => entry.bots.push(bot)).catch(() => {});
  return { fake, home, root, logs, code, paired, started };
}

const from = (id: number, first_name: string, username?: string) => ({
  from: { id, is_bot: false, first_name, ...(username ? { username } : {}) },
});

/** Waits until the bot has read every update queued so far. */
async function drained(fake: FakeTelegram): Promise<void> {
  for (let i = 0; i < 200 && fake.queued() > 0; i++) await Bun.sleep(20);
  await Bun.sleep(50);
}

describe("pairing the phone", () => {
  test("the code pairs its sender: .env keeps its other lines, mode 600; strangers before it got nothing", async () => {
    const w = pairingWorld({ envLines: "GROQ_API_KEY=gsk_keep_me\n# a comment\nTELEGRAM_OWNER_ID=\nOTHER=1\n" });
    const code = await w.code;
    expect(code).toMatch(/^\d{6}$/);
    // A stranger without the code: plain text, a bare /start, /help, a group message with the code.
    w.fake.pushUpdate(messageUpdate(STRANGER, "hello"));
    w.fake.pushUpdate(messageUpdate(STRANGER, "/start"));
    w.fake.pushUpdate(messageUpdate(STRANGER, "/help"));
    w.fake.pushUpdate(messageUpdate(STRANGER, `/start ${code}`, { id: -100, type: "group" }));
    await drained(w.fake);
    expect(w.fake.callsOf("sendMessage")).toEqual([]);
    w.fake.pushUpdate(messageUpdate(OWNER, `/start ${code}`, undefined, from(OWNER, "Ada", "ada_l")));
    const bot = await w.started;
    expect(w.paired).toEqual([{ id: OWNER, firstName: "Ada", username: "ada_l" }]);
    const env = join(w.home, ".env");
    expect(readFileSync(env, "utf8")).toBe(
      `GROQ_API_KEY=gsk_keep_me\n# a comment\nTELEGRAM_OWNER_ID=${OWNER}\nOTHER=1\n`,
    );
    expect(statSync(env).mode & 0o777).toBe(0o600);
    // Only the new owner was answered, and only once paired.
    const sent = w.fake.callsOf("sendMessage");
    expect(sent.map((c) => c.payload.chat_id)).toEqual([OWNER]);
    expect(String(sent[0]!.payload.text)).toContain("Paired");
    // The bot carries on as usual, as that owner.
    const before = w.fake.calls.length;
    w.fake.pushUpdate(messageUpdate(OWNER, "/help"));
    await w.fake.waitFor("sendMessage", (p) => p.chat_id === OWNER && String(p.text).includes("writes in pencil"), {
      from: before,
    });
    expect(bot.username.length).toBeGreaterThan(0);
  });

  test("a second /start with the code after pairing, from another account, gets nothing", async () => {
    const w = pairingWorld();
    const code = await w.code;
    w.fake.pushUpdate(messageUpdate(OWNER, `/start ${code}`));
    await w.started;
    const before = w.fake.calls.length;
    w.fake.pushUpdate(messageUpdate(STRANGER, `/start ${code}`));
    w.fake.pushUpdate(messageUpdate(STRANGER, "/help"));
    await drained(w.fake);
    // The owner's /help after them is answered, so the stranger's were read and ignored.
    w.fake.pushUpdate(messageUpdate(OWNER, "/help"));
    await w.fake.waitFor("sendMessage", (p) => p.chat_id === OWNER, { from: before });
    expect(w.fake.calls.slice(before).filter((c) => c.payload.chat_id === STRANGER)).toEqual([]);
    expect(w.logs.some((l) => l.includes(`from sender ${STRANGER}`))).toBe(true);
    expect(readFileSync(join(w.home, ".env"), "utf8")).toBe(`TELEGRAM_OWNER_ID=${OWNER}\n`);
  });

  test("five wrong codes end pairing: nothing answered, no owner written, the right code comes too late", async () => {
    const w = pairingWorld();
    const code = await w.code;
    const wrong = code === "000000" ? "000001" : "000000";
    for (let i = 0; i < 5; i++) w.fake.pushUpdate(messageUpdate(STRANGER, `/start ${wrong}`));
    w.fake.pushUpdate(messageUpdate(OWNER, `/start ${code}`));
    const error = await w.started.then(
      () => null,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(TelegramConfigError);
    expect(error!.message).toContain("5 wrong codes");
    expect(w.paired).toEqual([]);
    expect(w.fake.callsOf("sendMessage")).toEqual([]);
    expect(() => readFileSync(join(w.home, ".env"), "utf8")).toThrow();
  });

  test("four wrong codes still leave the right one working", async () => {
    const w = pairingWorld();
    const code = await w.code;
    for (let i = 0; i < 4; i++) w.fake.pushUpdate(messageUpdate(STRANGER, `/start ${String(i).repeat(7)}`));
    w.fake.pushUpdate(messageUpdate(OWNER, `/start ${code}`));
    await w.started;
    expect(w.paired.map((o) => o.id)).toEqual([OWNER]);
  });

  test("with an owner set, pairing never starts by itself; replace pairs a new one", async () => {
    const w = pairingWorld({ owner: 4242 });
    const bot = await w.started;
    expect(w.paired).toEqual([]);
    w.fake.pushUpdate(messageUpdate(4242, "/help"));
    await w.fake.waitFor("sendMessage", (p) => p.chat_id === 4242);
    await bot.stop();
    const again = pairingWorld({ owner: 4242, replace: true, envLines: "TELEGRAM_OWNER_ID=4242\n" });
    const code = await again.code;
    again.fake.pushUpdate(messageUpdate(4242, "/help")); // the old owner, during pairing: ignored
    again.fake.pushUpdate(messageUpdate(OWNER, `/start ${code}`));
    await again.started;
    expect(again.fake.callsOf("sendMessage").map((c) => c.payload.chat_id)).toEqual([OWNER]);
    expect(readFileSync(join(again.home, ".env"), "utf8")).toBe(`TELEGRAM_OWNER_ID=${OWNER}\n`);
  });
});

describe("a pairing code", () => {
  test("is six digits from the cryptographic source, and good once", () => {
    const codes = new Set(Array.from({ length: 200 }, () => newPairingCode()));
    expect([...codes].every((c) => /^\d{6}$/.test(c))).toBe(true);
    expect(codes.size).toBeGreaterThan(190);
    const pairing = new Pairing("123456");
    const update = (id: number, text: string) => ({ update_id: 1, ...messageUpdate(id, text) });
    expect(pairing.step(update(1, "/start 12345")).kind).toBe("wrong");
    expect(pairing.step(update(1, "/start 1234567")).kind).toBe("wrong");
    expect(pairing.step(update(1, "/start@pencil_bot 123456")).kind).toBe("paired");
    expect(pairing.step(update(2, "/start 123456")).kind).toBe("ignored");
  });
});

/** `pencil telegram` in a pseudo-terminal: what it printed so far, keys to type, and its exit. */
function telegramInTerminal(args: string[], env: Record<string, string>, cwd: string) {
  let screen = "";
  const decoder = new TextDecoder();
  const proc = Bun.spawn([process.execPath, INDEX, "telegram", ...args], {
    cwd,
    env: withTranspilerCache(env),
    terminal: {
      cols: 160,
      rows: 50,
      data(_t, data) {
        screen += decoder.decode(data, { stream: true });
      },
    },
  });
  const until = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const match = plain(screen).match(pattern);
      if (match) return match;
      if (Date.now() > deadline) {
        proc.kill("SIGKILL");
        throw new Error(`Timed out waiting for ${pattern}. Screen:\n${plain(screen)}`);
      }
      await Bun.sleep(25);
    }
  };
  return { proc, until, type: (keys: string) => proc.terminal!.write(keys), screen: () => plain(screen) };
}

describe("pencil telegram in a terminal", () => {
  function cliWorld() {
    const base = realpathSync(tempDir("pencil-pair-cli-"));
    const home = join(base, "pencil-home");
    const ws = join(base, "ws");
    mkdirSync(home);
    mkdirSync(ws);
    writeFileSync(join(home, ".env"), "OPENROUTER_API_KEY=sk-or-x\n");
    const fake = startFakeTelegram();
    running.push({ fake, bots: [] });
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: base,
      PENCIL_HOME: home,
      NO_COLOR: "1",
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.apiRoot,
    };
    return { base: ws, home, fake, env };
  }

  test("prints the code, says who paired, writes the owner beside the other lines, and runs on", async () => {
    const { base, home, fake, env } = cliWorld();
    const cli = telegramInTerminal(["-w", base], env, base);
    const code = (await cli.until(/\/start (\d{6})/))[1]!;
    fake.pushUpdate(messageUpdate(OWNER, `/start ${code}`, undefined, from(OWNER, "Ada", "ada_l")));
    await cli.until(/Paired with Ada \(@ada_l, id 777\)/);
    await cli.until(/bot is running/);
    expect(readFileSync(join(home, ".env"), "utf8")).toBe(`OPENROUTER_API_KEY=sk-or-x\nTELEGRAM_OWNER_ID=${OWNER}\n`);
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    cli.proc.kill("SIGINT");
    expect(await cli.proc.exited).toBe(0);
    cli.proc.terminal?.close();
  }, 20_000);

  test("--pair asks first; no keeps the owner and pairs nothing", async () => {
    const { base, home, fake, env } = cliWorld();
    writeFileSync(join(home, ".env"), "TELEGRAM_OWNER_ID=4242\n");
    const cli = telegramInTerminal(["--pair", "-w", base], env, base);
    await cli.until(/Replace the bot's owner \(user 4242\)/);
    cli.type("n");
    expect(await cli.proc.exited).toBe(0);
    cli.proc.terminal?.close();
    expect(cli.screen()).toContain("The owner stays as it is.");
    expect(fake.callsOf("getUpdates")).toEqual([]);
    expect(readFileSync(join(home, ".env"), "utf8")).toBe("TELEGRAM_OWNER_ID=4242\n");
  });
});

describe("pencil doctor and an ignored sender", () => {
  test("names who wrote and was ignored, and how to pair", async () => {
    const w = pairingWorld({ owner: 4242 });
    const bot = await w.started;
    w.fake.pushUpdate(messageUpdate(STRANGER, "hi, it is me", undefined, from(STRANGER, "Bob", "bob_b")));
    w.fake.pushUpdate(messageUpdate(4242, "/help"));
    await w.fake.waitFor("sendMessage", (p) => p.chat_id === 4242);
    await bot.stop();
    expect(w.logs.join("\n")).toContain(`from sender ${STRANGER}`);
    const doctor = await runCli(["doctor", "-w", w.root], {
      cwd: w.root,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: w.home,
        PENCIL_HOME: w.home,
        NO_COLOR: "1",
        TELEGRAM_BOT_TOKEN: w.fake.token,
        TELEGRAM_OWNER_ID: "4242",
        TELEGRAM_API_ROOT: w.fake.apiRoot,
      },
    });
    const text = doctor.stdout.replace(/\s+/g, " ");
    expect(text).toContain(`ignored 1 update(s) from sender ${STRANGER} (Bob @bob_b)`);
    expect(text).toContain("telegram --pair (it asks first)");
  }, 20_000);
});
