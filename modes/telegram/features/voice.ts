import { formatBytes } from "../../../core/format-bytes.ts";
import { Composer } from "grammy";
import { resolveTranscriber } from "../../../ai/transcriber.ts";
import { answerWith } from "../buttons.ts";
import { pressed, type BotDeps, type FeatureFactory, type PencilContext } from "../context.ts";
import { GoalCards } from "../goal-cards.ts";
import { escapeHtml } from "../html.ts";
import { downloadTelegramFile, TELEGRAM_DOWNLOAD_LIMIT } from "../telegram-files.ts";

/** Longest voice note transcribed: a goal, not a meeting (Groq takes 25 MB; Telegram lets bots fetch 20 MB). */
const MAX_VOICE_SECONDS = 600;
/** Biggest voice note or audio file transcribed. */
export const MAX_VOICE_BYTES = TELEGRAM_DOWNLOAD_LIMIT;

/** The workspace line every goal card carries. */
function workspaceLine(deps: BotDeps): string {
  return `📍 <b>${escapeHtml(deps.projects.activeName)}</b> <code>${escapeHtml(deps.runtime.ws.root)}</code>`;
}

/**
 * Voice goals: a voice note or audio file from the owner is transcribed and shown
 * back with Run / Edit / Cancel; nothing starts before Run. The work is detached
 * from the update handler so presses keep flowing while a provider answers.
 */
export const voiceFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  const owner = deps.config.ownerId;
  const transcriber = resolveTranscriber(deps.runtime.env);
  const goals = new GoalCards(
    deps.outbox,
    deps.tokens,
    owner,
    () => workspaceLine(deps),
    () => deps.runtime.ws.root,
  );
  const report = (error: unknown) => deps.log(`voice note: ${error instanceof Error ? error.message : String(error)}`);

  composer.on(["message:voice", "message:audio"], async (ctx, next) => {
    // Someone else's words are never a goal: a forwarded note is offered as a brain note instead (brain.ts).
    if (ctx.message.forward_origin !== undefined) return next();
    const audio = ctx.message.voice ?? ctx.message.audio!;
    if (!transcriber) {
      await deps.outbox.send(
        owner,
        `🎙 Voice goals need a transcription provider: set <code>GROQ_API_KEY</code> (Groq Whisper) or <code>LOCAL_TRANSCRIBE_BASE_URL</code> (a local OpenAI-compatible <code>/v1/audio/transcriptions</code> server) in .env and restart the bot. Meanwhile, type the goal: <code>/agent …</code>`,
      );
      return;
    }
    const tooBig = refusal(audio.duration, audio.file_size);
    if (tooBig) {
      await deps.outbox.send(owner, tooBig);
      return;
    }
    void (async () => {
      try {
        void deps.outbox.typing(owner); // the few seconds of transcription are not silence
        const bytes = await downloadTelegramFile(ctx.api, deps.config, audio.file_id, MAX_VOICE_BYTES);
        const heard = await transcriber.transcribe(bytes);
        if (!heard.text) {
          await deps.outbox.send(
            owner,
            "🎙 I heard nothing in that voice note (silence?). Nothing will run. Try again, or type the goal: <code>/agent …</code>",
          );
          return;
        }
        await goals.show(heard.text, `🎙 <b>I heard</b> <i>(${escapeHtml(heard.label)})</i>`);
      } catch (error) {
        report(error);
        await deps.outbox
          .send(
            owner,
            `🎙 ${escapeHtml(error instanceof Error ? error.message : String(error))} Nothing will run; send it again or type the goal: <code>/agent …</code>`,
          )
          .catch(report);
      }
    })();
  });

  composer.filter(
    pressed("goal-run", "goal-edit", "goal-cancel"),
    answerWith((ctx) =>
      // Run does what the same words typed would do: a follow-up in the current session, a fresh run after /new, the
      // held-goal choice when a changeset waits; with no session yet, a first run.
      goals.press(ctx.button!, async (goal) => {
        const outcome = await deps.launcher.followUp(goal);
        return outcome === "no-session" ? deps.launcher.launch("agent", goal) : outcome === "started";
      }),
    ),
  );

  composer.on("message:text", async (ctx, next) => {
    if (ctx.message.text.startsWith("/") || !(await goals.takeCorrection(ctx.message.text))) return next();
  });

  return { name: "voice", commands: [], composer };
};

/** Why a note is refused before any download or provider call (HTML), or null when it is within the caps. */
export function refusal(durationSeconds: number | undefined, bytes: number | undefined): string | null {
  const minutes = MAX_VOICE_SECONDS / 60;
  if (durationSeconds !== undefined && durationSeconds > MAX_VOICE_SECONDS) {
    return `🎙 That note is ${Math.ceil(durationSeconds / 60)} min long; voice goals can be up to ${minutes} min (and ${formatBytes(MAX_VOICE_BYTES)}). Say it shorter, or type it: <code>/agent …</code>`;
  }
  if (bytes !== undefined && bytes > MAX_VOICE_BYTES) {
    return `🎙 That file is ${formatBytes(bytes)}; voice goals can be up to ${formatBytes(MAX_VOICE_BYTES)} (and ${minutes} min). Send a shorter one, or type it: <code>/agent …</code>`;
  }
  return null;
}
