import { afterEach, describe, expect, test } from "bun:test";
import { startFakeTranscriptionServer, type FakeTranscriptionServer } from "../../support/fake-transcription-server.ts";
import { givePristineBrain } from "../../support/pristine-brain.ts";
import { mediaUpdate, message, OWNER, press, type TelegramWorld, telegramWorld } from "../../support/telegram-world.ts";

// A forwarded voice note is someone else's words: never downloaded, never transcribed,
// never a goal. The real bot against the fake Bot API and a fake Whisper server.

const worlds: TelegramWorld[] = [];
const servers: FakeTranscriptionServer[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.stop();
  for (const s of servers.splice(0)) await s.stop();
});

const OGG = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0, 2, ...Array.from({ length: 200 }, (_, i) => i % 251)]);
const FORWARDED = {
  forward_origin: { type: "user", sender_user: { id: 999, is_bot: false, first_name: "Mallory" }, date: 1 },
} as any;

async function setup() {
  const w = telegramWorld([{ text: "the model must not run" }]);
  worlds.push(w);
  const stt = startFakeTranscriptionServer("groq");
  servers.push(stt);
  await w.start({}, { GROQ_API_KEY: "gsk_test", GROQ_BASE_URL: stt.baseURL });
  return { w, stt };
}

function forward(w: TelegramWorld, media: "voice" | "audio" | "video_note"): void {
  const fileId = w.fake.addFile(OGG, { path: `${media}/fwd.oga` });
  const meta = { file_id: fileId, file_unique_id: `u${fileId}`, duration: 3, file_size: OGG.length };
  const body =
    media === "voice"
      ? { voice: { ...meta, mime_type: "audio/ogg" } }
      : media === "audio"
        ? { audio: { ...meta, mime_type: "audio/mpeg" } }
        : { video_note: { ...meta, length: 240 } };
  w.fake.pushUpdate(mediaUpdate(OWNER, { ...body, ...FORWARDED } as any));
}

describe("telegram: a forwarded voice note", () => {
  test("is never fetched or transcribed, never a goal: it is offered as a note", async () => {
    const { w, stt } = await setup();
    for (const media of ["voice", "audio", "video_note"] as const) {
      forward(w, media);
      const what = { voice: "voice note", audio: "audio file", video_note: "video note" }[media];
      const offer = await message(w.fake, (t) => t.includes(`That ${what} was forwarded`));
      expect(offer.visible).toContain("never a goal");
      expect(offer.reply_markup.inline_keyboard.flat().map((b: { text: string }) => b.text)).toEqual([
        "📥 Dump it as a note",
      ]);
    }
    expect(w.fake.callsOf("getFile")).toHaveLength(0);
    expect(w.fake.downloads).toHaveLength(0);
    expect(stt.requests).toHaveLength(0);
    expect(w.model.calls).toHaveLength(0);
    // No goal card either: nothing offers to Run it.
    expect(w.fake.findButton(OWNER, (t) => t.includes("Run"))).toBeNull();
  });

  test("Dump it as a note: only then is it fetched and transcribed, and it is stored as a note saying where it came from", async () => {
    const { w, stt } = await setup();
    // The brain as an earlier dump created it: storing the note opens it instead of creating it.
    await givePristineBrain(w.pencilHome);
    forward(w, "voice");
    await message(w.fake, (t) => t.includes("That voice note was forwarded"));
    expect(await press(w.fake, "📥 Dump it as a note")).toBe("Storing it as a note");
    // Opening the embedded brain (PGlite) takes seconds on a loaded machine: a long wait, not a sleep.
    const storedCall = await w.fake.waitFor("sendMessage", (p) => String(p.text).includes("Stored"), {
      timeoutMs: 60_000,
    });
    const stored = { visible: String(storedCall.payload.text) };
    expect(stored.visible).toContain("/note_");
    expect(w.fake.downloads).toEqual(["voice/fwd.oga"]);
    expect(stt.requests).toHaveLength(1);
    expect(w.model.calls).toHaveLength(0);
    // The button is single use.
    expect(await press(w.fake, "📥 Dump it as a note")).not.toBe("Storing it as a note");
    expect(stt.requests).toHaveLength(1);
  }, 90_000);
});
