import { randomBytes } from "node:crypto";
import { Composer } from "grammy";
import type { Message } from "grammy/types";
import { resolveTranscriber } from "../../../ai/transcriber.ts";
import { citation } from "../../../brain/answer.ts";
import type { AskResult, Brain, Capture, DumpResult } from "../../../brain/brain.ts";
import type { Note } from "../../../brain/note.ts";
import { answerWith } from "../buttons.ts";
import { pressed, type BotDeps, type FeatureFactory, type PencilContext } from "../context.ts";
import { escapeHtml } from "../html.ts";
import { errorText } from "../scrub.ts";
import { downloadTelegramFile } from "../telegram-files.ts";

import { MAX_VOICE_BYTES, refusal } from "./voice.ts";
import { DumpRefused } from "../../../core/errors/dump-refused.ts";
import { TelegramFileError } from "../../../core/errors/telegram-file-error.ts";

const NOTES_SHOWN = 10;
/** Forwarded voice, audio and video notes held for their "Dump it as a note" button; the oldest go first. */
const MAX_HELD_MEDIA = 50;

/** A forwarded voice, audio or video note waiting for the owner to dump it as a note (nothing fetched yet). */
interface ForwardedMedia {
  fileId: string;
  what: string;
  /** The note's source: who it was forwarded from, and what it was. */
  source: string;
  duration?: number;
  size?: number;
}
/** Characters of a note's content shown by /note_<id>, under Telegram's 4,096 with room for the header. */
const NOTE_ROOM = 3300;

/**
 * The second brain from the phone: /dump <text or URL>, a photo (no caption, or a
 * caption starting with /dump), /brain <question>, /notes and /note_<id>
 * (forwarded messages: forwardedNoteFeature). Work that calls models runs in the background, one brain operation at
 * a time (the embedded database has one writer), so the bot keeps answering.
 */
export const brainFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  const owner = deps.config.ownerId;
  const send = (html: string) => deps.outbox.send(owner, html);
  const background = brainQueue(deps);

  composer.command("dump", async (ctx) => {
    const text = ctx.match.trim();
    if (!text) {
      await send("Usage: /dump &lt;text or URL&gt; — or send a photo, or forward a message to me.");
      return;
    }
    await send("📥 Storing…");
    background("/dump", async (brain) => {
      const capture: Capture = /^https?:\/\/\S+$/i.test(text)
        ? await (await import("../../../brain/capture.ts")).captureUrl(text, deps.runtime.env)
        : { kind: "text", source: null, content: text };
      await send(storedHtml(await brain.dump(capture)));
    });
  });

  composer.on("message:photo", async (ctx, next) => {
    const caption = ctx.msg.caption?.trim() ?? "";
    // Forwarded media are judged by media.ts (someone else's caption); a photo with any other caption is a goal with an image (README "Telegram mode").
    if (ctx.msg.forward_origin !== undefined) return next();
    if (caption !== "" && !/^\/dump(@\w+)?(\s|$)/.test(caption)) return next();
    const photo = ctx.msg.photo.at(-1)!;
    const note = caption.replace(/^\/dump(@\w+)?\s*/, "");
    await send("📷 Reading the photo…");
    background("the photo", async (brain) => {
      const { capturePhoto, MAX_IMAGE_BYTES } = await import("../../../brain/capture.ts");
      const { visionFromEnv } = await import("../../../ai/vision.ts");
      if ((photo.file_size ?? 0) > MAX_IMAGE_BYTES)
        throw new DumpRefused("The photo is over 4 MB; send a smaller copy. Nothing was stored.");
      let bytes: Uint8Array;
      try {
        bytes = await downloadTelegramFile(ctx.api, deps.config, photo.file_id, MAX_IMAGE_BYTES);
      } catch (error) {
        if (TelegramFileError.isInstance(error)) throw new DumpRefused(`${error.message} Nothing was stored.`);
        throw error;
      }
      const capture = await capturePhoto(
        bytes,
        `telegram-photo-${photo.file_unique_id}.jpg`,
        note || null,
        visionFromEnv(deps.runtime.env),
      );
      await send(storedHtml(await brain.dump(capture)));
    });
  });

  composer.command("brain", async (ctx) => {
    const question = ctx.match.trim();
    if (!question) {
      await send("Usage: /brain &lt;question&gt; — e.g. <code>/brain what was the boiler service code?</code>");
      return;
    }
    await send("🧠 Looking through your notes…");
    background("/brain", async (brain) => send(answerHtml(await brain.ask(question))));
  });

  composer.command("notes", async () => {
    background("/notes", async (brain) => {
      const notes = await brain.deps.store.list(NOTES_SHOWN);
      if (notes.length === 0)
        return void (await send("No notes yet. Send /dump &lt;text&gt;, a link, a photo, or forward me a message."));
      await send(
        `🗂 <b>Recent notes</b>\n\n${notes.map((n) => `/note_${n.id} ${escapeHtml(n.title)} <i>${n.createdAt.slice(0, 10)}</i>`).join("\n")}`,
      );
    });
  });

  composer.hears(/^\/note_(\d{1,15})(@\w+)?$/, async (ctx) => {
    const id = Number(ctx.match[1]);
    background(`/note_${id}`, async (brain) => {
      const note = await brain.deps.store.get(id);
      await send(note ? noteHtml(note) : `There is no note #${id}. /notes lists the recent ones.`);
    });
  });

  return {
    name: "brain",
    commands: [
      { command: "dump", description: "Store a note: text or a link (or send a photo)" },
      { command: "brain", description: "Ask your notes" },
      { command: "notes", description: "Recent notes" },
    ],
    composer,
  };
};

/**
 * Forwarded text becomes a note. Installed before every command feature, after
 * forwarded.ts (which refuses a forwarded command: someone else's words start nothing).
 */
export const forwardedNoteFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  const send = (html: string) => deps.outbox.send(deps.config.ownerId, html);
  const background = brainQueue(deps);
  // Forwarded text only: a forwarded command was already refused (forwarded.ts), forwarded media go to media.ts.
  composer.on("message:text", async (ctx, next) => {
    if (ctx.msg.forward_origin === undefined) return next();
    const text = ctx.msg.text.trim();
    if (!text) return next();
    await send("📥 Storing the forwarded message…");
    background("the forwarded message", async (brain) => {
      await send(storedHtml(await brain.dump({ kind: "text", source: forwardedFrom(ctx.msg), content: text })));
    });
  });

  // Forwarded voice, audio and video notes: someone else's words, never a goal. Nothing is downloaded or
  // transcribed (at the owner's cost) unless the owner asks for it as a note with the button.
  const held = new Map<string, ForwardedMedia>();
  composer.on(["message:voice", "message:audio", "message:video_note"], async (ctx, next) => {
    if (ctx.msg.forward_origin === undefined) return next();
    const media = ctx.msg.voice ?? ctx.msg.audio ?? ctx.msg.video_note!;
    const what = ctx.msg.voice ? "voice note" : ctx.msg.audio ? "audio file" : "video note";
    const id = randomBytes(6).toString("hex");
    held.set(id, {
      fileId: media.file_id,
      what,
      source: `${forwardedFrom(ctx.msg)} (${what}, transcribed)`,
      ...(media.duration !== undefined ? { duration: media.duration } : {}),
      ...(media.file_size !== undefined ? { size: media.file_size } : {}),
    });
    while (held.size > MAX_HELD_MEDIA) held.delete(held.keys().next().value!);
    const [dump] = deps.tokens.issue([
      { action: "dump-forwarded", subject: id, item: what, digest: media.file_unique_id, owner: deps.config.ownerId },
    ]);
    await deps.outbox.send(
      deps.config.ownerId,
      `↪️ That ${what} was forwarded: it is someone else's words, so it is never a goal, and nothing was downloaded or transcribed. Keep it in your notes instead?`,
      { inline_keyboard: [[{ text: "📥 Dump it as a note", callback_data: dump! }]] },
    );
  });
  composer.filter(
    pressed("dump-forwarded"),
    answerWith(async (ctx) => {
      const button = ctx.button!;
      const media = held.get(button.subject);
      deps.tokens.revoke(button.token);
      held.delete(button.subject);
      if (!media) return "That forwarded note is no longer held; forward it again.";
      const transcriber = resolveTranscriber(deps.runtime.env);
      if (!transcriber) {
        await send(
          "🎙 Transcribing needs <code>GROQ_API_KEY</code> (Groq Whisper) or <code>LOCAL_TRANSCRIBE_BASE_URL</code> in .env; nothing was stored.",
        );
        return "No transcription provider";
      }
      const tooBig = refusal(media.duration, media.size);
      if (tooBig) {
        await send(tooBig);
        return "Too long";
      }
      await send(`📥 Transcribing the forwarded ${media.what} into a note…`);
      background(`the forwarded ${media.what}`, async (brain) => {
        const bytes = await downloadTelegramFile(ctx.api, deps.config, media.fileId, MAX_VOICE_BYTES);
        const heard = await transcriber.transcribe(bytes);
        if (!heard.text) return void (await send(`🎙 I heard nothing in that ${media.what}; nothing was stored.`));
        await send(storedHtml(await brain.dump({ kind: "text", source: media.source, content: heard.text })));
      });
      return "Storing it as a note";
    }),
  );

  return { name: "forwarded notes", commands: [], composer };
};

const queues = new WeakMap<BotDeps, (what: string, job: (brain: Brain) => Promise<unknown>) => void>();

/**
 * Runs brain work one job at a time, off the update handler: opens the brain, runs
 * the job, closes it (so the CLI can use the embedded database between jobs). A
 * refused dump is told as it is; any other failure is logged and reported, token-free.
 */
function brainQueue(deps: BotDeps): (what: string, job: (brain: Brain) => Promise<unknown>) => void {
  const existing = queues.get(deps);
  if (existing) return existing;
  let tail: Promise<unknown> = Promise.resolve();
  const queue = (what: string, job: (brain: Brain) => Promise<unknown>): void => {
    tail = tail.then(async () => {
      let brain: Brain | undefined;
      try {
        const { openBrain } = await import("../../../brain/open-brain.ts");
        brain = await openBrain(deps.runtime.env);
        await job(brain);
      } catch (error) {
        const refused = DumpRefused.isInstance(error);
        if (!refused) deps.log(`error in ${what}: ${errorText(error, deps.config.token)}`);
        const text = refused
          ? (error as Error).message
          : `⚠️ ${what} failed: ${errorText(error, deps.config.token).slice(0, 1500)}`;
        await deps.outbox.send(deps.config.ownerId, escapeHtml(text)).catch(() => {});
      } finally {
        await brain?.deps.store.close().catch(() => {});
      }
    });
  };
  queues.set(deps, queue);
  return queue;
}

function storedHtml(result: DumpResult): string {
  const n = result.note;
  const lines = [`📥 Stored <b>${escapeHtml(citation(n))}</b> /note_${n.id}`];
  if (n.tags.length) lines.push(n.tags.map((t) => `#${escapeHtml(t.replace(/[^\p{L}\p{N}_]/gu, "_"))}`).join(" "));
  if (n.summary) lines.push(`<i>${escapeHtml(n.summary)}</i>`);
  if (result.original) lines.push("The photo itself is kept beside the note.");
  if (result.enrichment === "scripted") lines.push("Title and tags are scripted (no model configured).");
  if (result.enrichment === "failed")
    lines.push(
      `The model could not enrich it (${escapeHtml(result.enrichError ?? "")}); <code>pencil brain reindex</code> does it later.`,
    );
  if (result.embedError)
    lines.push(`No vector yet (${escapeHtml(result.embedError)}); found by full text until reindex.`);
  return lines.join("\n");
}

/** The answer with each `[#id title]` citation of a retrieved note made a tappable /note_<id> command. */
function answerHtml(result: AskResult): string {
  if (result.outcome === "nothing") return `🧠 ${escapeHtml(result.answer)}`;
  if (result.outcome === "no-model") {
    return `🧠 No chat model is configured, so here are the notes that match:\n\n${result.retrieved.map((r) => `/note_${r.note.id} ${escapeHtml(r.note.title)}`).join("\n")}`;
  }
  const known = new Set(result.cited.map((n) => n.id));
  const body = escapeHtml(result.answer).replace(/\[#(\d+)([^\]]*)\]/g, (whole, id: string) =>
    known.has(Number(id)) ? `/note_${id}` : whole,
  );
  const sources = result.cited.map((n) => `/note_${n.id} ${escapeHtml(n.title)}`).join("\n");
  return `🧠 ${body}${sources ? `\n\n<b>Sources</b>\n${sources}` : ""}`;
}

function noteHtml(note: Note): string {
  const bodyHtml =
    note.content.length > NOTE_ROOM
      ? `${escapeHtml(note.content.slice(0, NOTE_ROOM))}\n… (${note.content.length - NOTE_ROOM} more characters: <code>pencil brain show ${note.id}</code>)`
      : escapeHtml(note.content);
  const meta = [
    note.createdAt.slice(0, 16).replace("T", " "),
    note.kind,
    note.source,
    note.tags.map((t) => `#${t}`).join(" "),
  ]
    .filter(Boolean)
    .join(" · ");
  return `<b>${escapeHtml(citation(note))}</b>\n<i>${escapeHtml(meta)}</i>\n${note.summary ? `\n${escapeHtml(note.summary)}\n` : ""}\n${bodyHtml}`;
}

function forwardedFrom(msg: Message): string {
  const origin = msg.forward_origin;
  if (!origin) return "forwarded";
  switch (origin.type) {
    case "user":
      return `forwarded from ${[origin.sender_user.first_name, origin.sender_user.last_name].filter(Boolean).join(" ")}`;
    case "hidden_user":
      return `forwarded from ${origin.sender_user_name}`;
    case "chat":
      return `forwarded from ${origin.sender_chat.title ?? "a chat"}`;
    case "channel":
      return `forwarded from ${origin.chat.title ?? "a channel"}`;
  }
}
