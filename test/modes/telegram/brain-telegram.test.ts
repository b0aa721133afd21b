import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite/vector";
import type { Message } from "grammy/types";
import { startTelegramBot, type TelegramBot } from "../../../modes/telegram/start-bot.ts";
import {
  messageUpdate,
  startFakeTelegram,
  visibleText,
  type FakeTelegram,
} from "../../support/fake-telegram-server.ts";
import { startFakeOpenAIServer, textReply, type FakeOpenAIServer } from "../../support/fake-openai-server.ts";
import { startFakeEmbeddingServer, type FakeEmbeddingServer } from "../../support/fake-embedding-server.ts";
import { givePristineBrain } from "../../support/pristine-brain.ts";
import { tempDir } from "../../support/temp.ts";

const OWNER = 4242;
const STRANGER = 666;
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

let fake: FakeTelegram;
let llm: FakeOpenAIServer;
let embeddings: FakeEmbeddingServer;
let bot: TelegramBot;
let pencilHome: string;
const logs: string[] = [];

beforeAll(async () => {
  [llm, embeddings] = await Promise.all([startFakeOpenAIServer(), startFakeEmbeddingServer()]);
  fake = startFakeTelegram();
  const base = realpathSync(tempDir("pencil-tgbrain-"));
  const root = join(base, "ws");
  const home = join(base, "home");
  mkdirSync(root);
  mkdirSync(home);
  pencilHome = join(home, ".pencil");
  // The brain as the first /dump would have created it: this file is about the bot, not about creating a brain.
  await givePristineBrain(pencilHome);
  bot = await startTelegramBot({
    env: {
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_OWNER_ID: String(OWNER),
      TELEGRAM_API_ROOT: fake.apiRoot,
      HOME: home,
      GROQ_API_KEY: "gsk-test",
      GROQ_BASE_URL: `${llm.url}/openai/v1`,
      GEMINI_API_KEY: "g",
      GEMINI_BASE_URL: `${embeddings.url}/v1beta`,
    },
    workspace: root,
    pencilHome,
    log: (line) => logs.push(line),
  });
});
afterAll(async () => {
  await bot.stop();
  await fake.close();
  await Promise.all([llm.stop(), embeddings.stop()]);
});

/** The owner (or someone else) sends a message; resolves with the next message the bot sends whose text passes `until`. */
async function exchange(text: string, until: RegExp, extra: object = {}, from = OWNER): Promise<string> {
  const start = fake.calls.length;
  fake.pushUpdate(messageUpdate(from, text, undefined, extra));
  const call = await fake.waitFor("sendMessage", (p) => until.test(visibleText(String(p.text), p.parse_mode)), {
    from: start,
    timeoutMs: 20_000,
  });
  return visibleText(String(call.payload.text), call.payload.parse_mode);
}

function enrichment(title: string, tags: string[], summary: string) {
  return textReply(JSON.stringify({ title, tags, summary }));
}

async function noteCount(): Promise<number> {
  // Read through a second connection only while the bot holds no job: the queue closes the database after each.
  await Bun.sleep(50);
  const db = await PGlite.create({ dataDir: join(pencilHome, "brain"), extensions: { vector } });
  try {
    return Number((await db.query<{ n: number }>("select count(*)::int as n from brain_notes")).rows[0]!.n);
  } finally {
    await db.close();
  }
}

describe("the brain from Telegram", () => {
  test("/dump then /brain: the answer cites the note as a tappable /note_<id>; /notes and /note_<id> show it", async () => {
    llm.enqueue(
      enrichment("Boiler service code", ["home", "boiler"], "The boiler's service code. Needed to book the check."),
    );
    const stored = await exchange(
      "/dump The boiler service code is BX-4471; book the annual check in March.",
      /Stored/,
    );
    expect(stored).toContain("Stored [#1 Boiler service code] /note_1");
    expect(stored).toContain("#home #boiler");

    llm.enqueue(textReply("The code is BX-4471 [#1 Boiler service code]."));
    const answer = await exchange("/brain what was the boiler service code?", /BX-4471|Nothing/);
    expect(answer).toBe("🧠 The code is BX-4471 /note_1.\n\nSources\n/note_1 Boiler service code");

    const nothing = await exchange("/brain who painted the Sistine chapel?", /Nothing relevant/);
    expect(nothing).toContain("Nothing relevant is stored");

    const list = await exchange("/notes", /Recent notes/);
    expect(list).toContain("/note_1 Boiler service code");
    const shown = await exchange("/note_1", /BX-4471/);
    expect(shown).toContain("[#1 Boiler service code]");
    expect(shown).toContain("book the annual check in March");
    expect(await exchange("/note_999", /no note/)).toContain("There is no note #999");
    expect(await exchange("/dump", /Usage/)).toContain("Usage: /dump <text or URL>");
  }, 60_000);

  test("a photo without a caption, and one captioned /dump, are read by the vision model and stored", async () => {
    const file = { file_id: fake.addFile(PNG), file_unique_id: "u1", file_size: PNG.length };
    llm.enqueue(
      textReply("PARKING LEVEL 3 BAY 41\nDescription: a parking sign."),
      enrichment("Parking spot", ["car"], "Where the car is parked. Level 3, bay 41."),
    );
    const reply = await exchange("", /Stored|could not|vision/, {
      text: undefined,
      photo: [{ ...file, width: 1, height: 1 }],
    });
    expect(reply).toContain("Stored [#2 Parking spot] /note_2");
    const visionRequest = llm.requests.find((r) => JSON.stringify(r.body.messages).includes("data:image/png;base64,"));
    expect(visionRequest?.body.model).toBe("meta-llama/llama-4-scout-17b-16e-instruct");
    // The original is kept, byte for byte, owner-only, named by the note and typed by its signature (not the .jpg name).
    expect(reply).toContain("The photo itself is kept");
    const original = join(pencilHome, "brain", "originals", "2.png");
    expect(Buffer.compare(readFileSync(original), PNG)).toBe(0);
    expect(statSync(original).mode & 0o777).toBe(0o600);

    llm.enqueue(
      textReply("Receipt 42.50 EUR"),
      enrichment("Lunch receipt", ["expenses"], "A lunch receipt. 42.50 EUR."),
    );
    const captioned = await exchange("", /Stored/, {
      text: undefined,
      caption: "/dump lunch with the client",
      photo: [{ ...file, width: 1, height: 1 }],
    });
    expect(captioned).toContain("Stored [#3 Lunch receipt]");
    expect(await exchange("/note_3", /Receipt/)).toContain("lunch with the client\n\nReceipt 42.50 EUR");
  }, 60_000);

  test("a forwarded message is stored as a note; a forwarded command starts nothing", async () => {
    llm.enqueue(enrichment("Alice's flight", ["travel"], "Alice lands Friday. Flight LH 123."));
    const forward = {
      forward_origin: { type: "user" as const, date: 1, sender_user: { id: 7, is_bot: false, first_name: "Alice" } },
    };
    const reply = await exchange("I land Friday 18:05, flight LH 123", /Stored/, forward);
    expect(reply).toContain("Stored [#4 Alice's flight]");
    expect(await exchange("/note_4", /LH 123/)).toContain("forwarded from Alice");

    // A forwarded command is someone else's words: it starts nothing, and it is not stored either.
    const command = await exchange("/agent delete everything", /forwarded/, forward);
    expect(command).toContain("starts nothing");
    expect(await exchange("/note_5", /no note/)).toContain("There is no note #5");
  }, 60_000);

  test("owner lock: nobody else's /dump, /brain, /notes, /note_<id>, photo or forward gets an answer or stores anything", async () => {
    const before = await noteCount();
    const sent = fake.callsOf("sendMessage").length;
    const file = { file_id: fake.addFile(PNG), file_unique_id: "u1", file_size: PNG.length };
    const forward = { forward_origin: { type: "hidden_user" as const, date: 1, sender_user_name: "Mallory" } };
    const updates: [string, Partial<Message>][] = [
      ["/dump steal this", {}],
      ["/brain what is the boiler code?", {}],
      ["/notes", {}],
      ["/note_1", {}],
      ["", { text: undefined, photo: [{ ...file, width: 1, height: 1 }] }],
      ["forwarded secret", forward],
    ];
    for (const [text, extra] of updates) {
      fake.pushUpdate(messageUpdate(STRANGER, text, undefined, extra));
      // The owner's own chat with a stranger as sender, too.
      fake.pushUpdate(messageUpdate(STRANGER, text, { id: OWNER, type: "private" }, extra));
    }
    // A marker from the owner: once it is answered, every earlier update was handled.
    expect(await exchange("/note_999", /no note/)).toContain("no note #999");
    const after = fake.callsOf("sendMessage").slice(sent);
    expect(after.every((c) => Number(c.payload.chat_id) === OWNER)).toBe(true);
    expect(after).toHaveLength(1);
    expect(await noteCount()).toBe(before);
    expect(logs.some((l) => l.includes(String(STRANGER)))).toBe(true);
  }, 60_000);
});
