import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScriptedTurn } from "../../../ai/scripted-model.ts";
import { messageUpdate } from "../../support/fake-telegram-server.ts";
import { startFakeTranscriptionServer, type FakeTranscriptionServer } from "../../support/fake-transcription-server.ts";
import {
  mediaUpdate,
  message,
  OWNER,
  press,
  type TelegramWorld,
  telegramWorld,
  textOf,
  until,
} from "../../support/telegram-world.ts";

const worlds: TelegramWorld[] = [];
const servers: FakeTranscriptionServer[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.stop();
  for (const s of servers.splice(0)) await s.stop();
});

/** A few bytes that look like an OGG/Opus voice note. */
const OGG = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0, 2, ...Array.from({ length: 200 }, (_, i) => i % 251)]);

const createHello: ScriptedTurn[] = [
  ({ prompt }) =>
    JSON.stringify(prompt).includes("add a hello function")
      ? {
          toolCalls: [{ name: "create_file", input: { path: "hello.ts", content: "export const hello = () => 1;\n" } }],
        }
      : { text: "wrong goal" },
  { text: "Added hello.ts." },
];

function setup(turns: ScriptedTurn[], flavour: "groq" | "openai" = "groq") {
  const w = telegramWorld(turns);
  worlds.push(w);
  const stt = startFakeTranscriptionServer(flavour);
  servers.push(stt);
  const env = { GROQ_API_KEY: "gsk_test", GROQ_BASE_URL: stt.baseURL };
  return { w, stt, env };
}

/** The owner (or `from`) sends a voice note of `bytes`. */
function sendVoice(
  w: TelegramWorld,
  bytes = OGG,
  meta: { duration?: number; file_size?: number } = {},
  from = OWNER,
  chat = from,
): void {
  const fileId = w.fake.addFile(bytes, {
    path: "voice/file_1.oga",
    ...(meta.file_size ? { size: meta.file_size } : {}),
  });
  w.fake.pushUpdate(
    mediaUpdate(
      from,
      {
        voice: {
          file_id: fileId,
          file_unique_id: `u${fileId}`,
          duration: meta.duration ?? 3,
          mime_type: "audio/ogg",
          file_size: meta.file_size ?? bytes.length,
        },
      },
      chat,
    ),
  );
}

describe("telegram: voice goals", () => {
  test("voice → transcript card (nothing runs) → Run → progress → changeset card", async () => {
    const { w, stt, env } = setup(createHello);
    await w.start({}, env);
    sendVoice(w);
    const card = await message(w.fake, (t) => t.includes("I heard"));
    expect(card.visible).toContain("add a hello function");
    expect(card.visible).toContain("groq:whisper-large-v3-turbo");
    expect(card.visible).toContain(w.root);
    expect(card.reply_markup.inline_keyboard.flat().map((b: { text: string }) => b.text)).toEqual([
      "▶️ Run",
      "✏️ Edit",
      "✖️ Cancel",
    ]);
    // The provider got the exact bytes through Groq's protocol, with the key; the model was not called yet.
    expect(stt.requests).toHaveLength(1);
    expect(stt.requests[0]!.model).toBe("whisper-large-v3-turbo");
    expect(stt.requests[0]!.authorization).toBe("Bearer gsk_test");
    expect([...stt.requests[0]!.bytes]).toEqual([...OGG]);
    expect(w.model.calls).toHaveLength(0);

    expect(await press(w.fake, "▶️ Run", card)).toBe("Starting…");
    const review = await message(w.fake, (t) => t.includes("📝 Review"));
    expect(review.visible).toContain("hello.ts");
    expect(textOf(w.fake, card)).toContain("Running");
    expect(existsSync(join(w.root, "hello.ts"))).toBe(false); // still only staged
    // The card's buttons acted once: a second Run is stale and starts nothing.
    expect(await press(w.fake, "▶️ Run", card)).toBe("This is no longer pending.");
    expect(await press(w.fake, "✅ Approve all", review)).toBe("Approved 1 file.");
    expect(readFileSync(join(w.root, "hello.ts"), "utf8")).toContain("hello");
  });

  test("Edit: the corrected goal comes back as a new card, and Run runs the corrected text", async () => {
    const { w, stt, env } = setup(createHello);
    stt.enqueue({ text: "add a yellow function" });
    await w.start({}, env);
    sendVoice(w);
    const card = await message(w.fake, (t) => t.includes("I heard"));
    expect(card.visible).toContain("yellow");
    expect(await press(w.fake, "✏️ Edit", card)).toBe("Send the corrected goal.");
    expect(textOf(w.fake, card)).toContain("Send the goal as it should read");
    w.fake.pushUpdate(messageUpdate(OWNER, "add a hello function"));
    const corrected = await message(w.fake, (t) => t.includes("Your goal"));
    expect(corrected.visible).toContain("add a hello function");
    expect(w.model.calls).toHaveLength(0);
    expect(await press(w.fake, "▶️ Run", corrected)).toBe("Starting…");
    await message(w.fake, (t) => t.includes("📝 Review") && t.includes("hello.ts"));
    expect(JSON.stringify(w.model.calls[0]!.prompt)).not.toContain("yellow");
  });

  test("after a run, a voice goal's Run continues the same session, as the typed words would", async () => {
    const { w, stt, env } = setup([
      ...createHello,
      { toolCalls: [{ name: "create_file", input: { path: "bye.ts", content: "export const bye = () => 2;\n" } }] },
      { text: "Added bye.ts." },
    ]);
    await w.start({}, env);
    sendVoice(w);
    const first = await message(w.fake, (t) => t.includes("I heard"));
    expect(await press(w.fake, "▶️ Run", first)).toBe("Starting…");
    await message(w.fake, (t) => t.includes("📝 Review") && t.includes("hello.ts"));

    stt.enqueue({ text: "now add a bye function" });
    const from = w.fake.calls.length;
    sendVoice(w);
    const second = await message(w.fake, (t) => t.includes("I heard"), from);
    expect(second.visible).toContain("now add a bye function");
    expect(w.model.calls).toHaveLength(2); // the card alone starts nothing
    expect(await press(w.fake, "▶️ Run", second)).toBe("Starting…");
    const grown = await message(w.fake, (t) => t.includes("📝 Review") && t.includes("bye.ts"), from);
    // The follow-up's model request carries the earlier turns: the first goal and the model's answer to it.
    const request = JSON.stringify(w.model.calls[2]!.prompt);
    expect(request).toContain("add a hello function");
    expect(request).toContain("Added hello.ts.");
    expect(request).toContain("now add a bye function");
    // The session's one pending changeset grew; no held-goal choice was asked for.
    expect(grown.visible).toContain("hello.ts");
    expect(w.fake.messagesIn(OWNER).some((m) => m.text.includes("Your goal is kept"))).toBe(false);
  });

  test("after /new, Run while a changeset waits: not started (the goal is held with its choice), and the card stays usable", async () => {
    const { w, env } = setup([
      ...createHello,
      { toolCalls: [{ name: "create_file", input: { path: "other.ts", content: "x\n" } }] },
      { text: "Added other.ts." },
    ]);
    await w.start({}, env);
    sendVoice(w);
    const first = await message(w.fake, (t) => t.includes("I heard"));
    expect(await press(w.fake, "▶️ Run", first)).toBe("Starting…");
    const review = await message(w.fake, (t) => t.includes("📝 Review") && t.includes("hello.ts"));
    w.fake.pushUpdate(messageUpdate(OWNER, "/new"));
    await message(w.fake, (t) => t.includes("fresh session"));
    const from = w.fake.calls.length;
    sendVoice(w);
    const second = await message(w.fake, (t) => t.includes("I heard"), from);
    expect(await press(w.fake, "▶️ Run", second)).toBe("Not started: see the message. This card still works.");
    // The goal is held (continue / review first / discard), not dropped.
    await message(w.fake, (t) => t.includes("Your goal is kept"), from);
    expect(await press(w.fake, "✖ Reject all", review)).toBeTruthy();
    expect(await press(w.fake, "▶️ Run", second)).toBe("Starting…");
  });

  test("a goal card runs only in the workspace it named, even after a switch", async () => {
    const { w, env } = setup(createHello);
    const b = join(w.base, "wsb");
    mkdirSync(b);
    mkdirSync(w.pencilHome, { recursive: true });
    writeFileSync(join(w.pencilHome, "settings.json"), JSON.stringify({ telegram: { workspaces: { a: w.root, b } } }));
    await w.start({}, env);
    sendVoice(w);
    const card = await message(w.fake, (t) => t.includes("I heard"));
    expect(card.visible).toContain("📍 a");
    w.fake.pushUpdate(messageUpdate(OWNER, "/projects"));
    await message(w.fake, (t) => t.includes("Tap one"));
    expect(await press(w.fake, "📁 b")).toBe("Switched to b.");
    expect(await press(w.fake, "▶️ Run", card)).toBe(
      "This goal was shown for another workspace: switch back with /projects, then press Run.",
    );
    expect(w.model.calls).toHaveLength(0);
  });

  test("Cancel drops the goal: nothing runs", async () => {
    const { w, env } = setup(createHello);
    await w.start({}, env);
    sendVoice(w);
    const card = await message(w.fake, (t) => t.includes("I heard"));
    expect(await press(w.fake, "✖️ Cancel", card)).toBe("Dropped.");
    expect(textOf(w.fake, card)).toContain("nothing ran");
    expect(await press(w.fake, "▶️ Run", card)).toBe("This is no longer pending.");
    expect(w.model.calls).toHaveLength(0);
  });

  test("no transcription provider: the message names the variables, and nothing is downloaded", async () => {
    const w = telegramWorld([]);
    worlds.push(w);
    await w.start();
    sendVoice(w);
    const reply = await message(w.fake, (t) => t.includes("transcription provider"));
    expect(reply.visible).toContain("GROQ_API_KEY");
    expect(reply.visible).toContain("LOCAL_TRANSCRIBE_BASE_URL");
    expect(w.fake.callsOf("getFile")).toHaveLength(0);
  });

  test("a silent note is said to be empty and no card is shown", async () => {
    const { w, stt, env } = setup([]);
    stt.enqueue({ text: "   " });
    await w.start({}, env);
    sendVoice(w);
    await message(w.fake, (t) => t.includes("heard nothing"));
    expect(w.fake.findButton(OWNER, (t) => t.includes("Run"))).toBeNull();
  });

  test("over the caps (duration or size): refused with the caps stated, before any download or provider call", async () => {
    const { w, stt, env } = setup([]);
    await w.start({}, env);
    sendVoice(w, OGG, { duration: 900 });
    const long = await message(w.fake, (t) => t.includes("min long"));
    expect(long.visible).toContain("up to 10 min");
    sendVoice(w, OGG, { file_size: 50 * 1024 * 1024 });
    const big = await message(w.fake, (t) => t.includes("50.0 MB"));
    expect(big.visible).toContain("20.0 MB");
    expect(w.fake.callsOf("getFile")).toHaveLength(0);
    expect(stt.requests).toHaveLength(0);
  });

  test("Groq failing falls back to the local OpenAI-compatible server", async () => {
    const { w, stt, env } = setup(createHello);
    const local = startFakeTranscriptionServer("openai", "add a hello function");
    servers.push(local);
    stt.enqueue({ status: 400, message: "audio file is not valid" });
    await w.start({}, { ...env, LOCAL_TRANSCRIBE_BASE_URL: local.baseURL });
    sendVoice(w);
    const card = await message(w.fake, (t) => t.includes("I heard"));
    expect(card.visible).toContain("local:whisper-1");
    expect(local.requests[0]!.authorization).toBe("Bearer local");
  });

  test("a forged voice note (stranger, or the owner's id in a group) gets no answer and costs no download or provider call", async () => {
    const { w, stt, env } = setup([]);
    await w.start({}, env);
    const before = w.fake.callsOf("sendMessage").length;
    sendVoice(w, OGG, {}, 999);
    sendVoice(w, OGG, {}, OWNER, -100);
    await until(() => w.logs.filter((l) => l.includes("ignored message")).length === 2, "both ignored");
    w.fake.pushUpdate(messageUpdate(OWNER, "/help"));
    await message(w.fake, (t) => t.includes("writes in pencil"));
    expect(w.fake.callsOf("getFile")).toHaveLength(0);
    expect(w.fake.downloads).toHaveLength(0);
    expect(stt.requests).toHaveLength(0);
    expect(w.fake.callsOf("sendMessage").length).toBe(before + 1);
  });
});
