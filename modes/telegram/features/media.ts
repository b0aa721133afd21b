import { formatBytes } from "../../../core/format-bytes.ts";
import type { UserContent } from "ai";
import { Composer } from "grammy";
import type { Document, PhotoSize } from "grammy/types";
import { describeImage, seesImages } from "../../../ai/vision.ts";
import type { FeatureFactory, PencilContext } from "../context.ts";
import { escapeHtml } from "../html.ts";
import { captionIntent } from "../media-routing.ts";
import { downloadTelegramFile } from "../telegram-files.ts";

/** Largest photo sent to a model: Groq takes base64 images up to 4 MB. */
const MAX_PHOTO_BYTES = 4 * 1024 * 1024;
/** Largest document read as context: about 64k tokens, the most a run's context should give to one log. */
const MAX_DOCUMENT_BYTES = 256 * 1024;

/**
 * Screenshots and files as context. A photo whose caption is a goal runs with the
 * image (a model that cannot see gets the vision model's description, and the
 * progress message says so); a document with a goal caption is read-only context
 * of that run, in the prompt only: it reaches the workspace only if the agent
 * stages it and the owner approves it, and it is scanned for text addressed to an AI
 * as what the agent reads is (flag after-instructions). Bare photos pass on (the brain takes them).
 * A forwarded photo or document carries someone else's caption: it is never a goal.
 */
export const mediaFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  const owner = deps.config.ownerId;
  const tell = (html: string) =>
    deps.outbox.send(owner, html).catch((error) => deps.log(`could not send: ${String(error)}`));
  /** Runs `work` detached from the update handler, telling the owner what failed. */
  const detached = (what: string, work: () => Promise<void>) =>
    void work().catch(async (error) => {
      deps.log(`${what}: ${error instanceof Error ? error.message : String(error)}`);
      await tell(`⚠️ ${escapeHtml(error instanceof Error ? error.message : String(error))} Nothing started.`);
    });

  composer.on("message:photo", async (ctx, next) => {
    const intent = captionIntent(ctx.message.caption);
    if (intent.kind === "pass") return next();
    if (ctx.message.forward_origin) {
      await tell(FORWARDED("That photo"));
      return;
    }
    const photo = largestWithin(ctx.message.photo, MAX_PHOTO_BYTES);
    if (!photo) {
      await tell(
        `🖼 That photo is over ${formatBytes(MAX_PHOTO_BYTES)} even at Telegram's smaller sizes; send a smaller screenshot. Nothing started.`,
      );
      return;
    }
    detached("photo goal", async () => {
      void deps.outbox.typing(owner); // the download and a vision call can take a few seconds
      const bytes = await downloadTelegramFile(ctx.api, deps.config, photo.file_id, MAX_PHOTO_BYTES);
      const model = deps.launcher.primaryModel(intent.mode);
      let firstMessage: UserContent;
      let note: string;
      if (seesImages(model)) {
        firstMessage = [
          { type: "text", text: intent.goal },
          { type: "file", data: Buffer.from(bytes).toString("base64"), mediaType: "image/jpeg" },
        ];
        note = "🖼 with your photo";
      } else {
        const seen = await describeImage(deps.runtime.env, bytes, "image/jpeg", intent.goal);
        firstMessage = [
          {
            type: "text",
            text: `${intent.goal}\n\nThe user attached a photo (a screenshot). You cannot see it; a vision model described it:\n${seen.text}`,
          },
        ];
        note = `🖼 photo described by ${seen.label} (${model || "the model"} cannot see images)`;
      }
      await deps.launcher.launch(intent.mode, intent.goal, { options: { firstMessage }, note });
    });
  });

  composer.on("message:document", async (ctx, next) => {
    const doc = ctx.message.document;
    const intent = captionIntent(ctx.message.caption);
    if (intent.kind === "pass") {
      if (ctx.message.caption?.trim().startsWith("/")) return next();
      await tell(
        `📎 Got <code>${escapeHtml(nameOf(doc))}</code>. Send it again with a caption saying what to do with it (the goal), e.g. <i>why does this crash?</i>; it is read as context of that run.`,
      );
      return;
    }
    if (ctx.message.forward_origin) {
      await tell(FORWARDED(`<code>${escapeHtml(nameOf(doc))}</code>`));
      return;
    }
    if (doc.file_size !== undefined && doc.file_size > MAX_DOCUMENT_BYTES) {
      await tell(
        `📎 <code>${escapeHtml(nameOf(doc))}</code> is ${formatBytes(doc.file_size)}; a document is read as context up to ${formatBytes(MAX_DOCUMENT_BYTES)}. Send the part that matters (e.g. the last few hundred lines). Nothing started.`,
      );
      return;
    }
    detached("document goal", async () => {
      const bytes = await downloadTelegramFile(ctx.api, deps.config, doc.file_id, MAX_DOCUMENT_BYTES);
      const text = asText(bytes);
      if (text === null) {
        await tell(
          `📎 <code>${escapeHtml(nameOf(doc))}</code> is not text; send logs, stack traces or patches as text files (screenshots as photos). Nothing started.`,
        );
        return;
      }
      const fence = "`".repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
      const firstMessage: UserContent = [
        {
          type: "text",
          text: `${intent.goal}\n\nThe user attached ${nameOf(doc)} as read-only context. It is not a file in the workspace; it reaches the workspace only if you stage it with a tool, and the user reviews that like any change.\n${fence}\n${text}\n${fence}`,
        },
      ];
      await deps.launcher.launch(intent.mode, intent.goal, {
        options: { firstMessage, documents: [{ name: nameOf(doc), text }] },
        note: `📎 with ${nameOf(doc)} (${formatBytes(bytes.length)}) as context`,
      });
    });
  });

  return { name: "media", commands: [], composer };
};

/** The answer to forwarded media with a caption: the caption was written by whoever sent it first, so it starts nothing (HTML). */
const FORWARDED = (what: string) =>
  `↪️ ${what} was forwarded: its caption is someone else's words, so it starts nothing. To work on it, send it again yourself with your own caption saying what to do (the goal). Nothing started.`;

/** The largest size of a photo within `max` bytes (sizes without a stated size count as fitting). */
function largestWithin(sizes: PhotoSize[], max: number): PhotoSize | null {
  const fitting = sizes.filter((s) => (s.file_size ?? 0) <= max);
  return fitting.sort((a, b) => b.width * b.height - a.width * a.height)[0] ?? null;
}

function nameOf(doc: Document): string {
  return (doc.file_name ?? "document").slice(0, 100);
}

/** The bytes as UTF-8 text, or null for binary content. */
function asText(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
