import { Composer } from "grammy";
import { CheckpointError } from "../../../core/errors/checkpoint-error.ts";
import { sessionFor } from "../../../app/checkpoints.ts";
import { rewindSession } from "../../../app/rewind-session.ts";
import { formatSteps } from "../../../render/steps-view.ts";
import { answerWith } from "../buttons.ts";
import { pressed, type BotDeps, type FeatureFactory, type PencilContext } from "../context.ts";
import { escapeHtml } from "../html.ts";

/** Rewind buttons offered under /steps: the latest undecided checkpoints. */
const REWIND_BUTTONS = 6;

/**
 * Sessions on the phone: plain text after a run is the next turn of that session;
 * /new starts a fresh one; /steps lists its checkpoints with Rewind buttons;
 * /rewind N takes its pending changes back to checkpoint N. A goal sent while a
 * changeset is pending is held with buttons (continue / review first / discard).
 */
export const sessionsFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  const owner = deps.config.ownerId;

  composer.command("new", async () => {
    deps.launcher.startFresh();
    await deps.outbox.send(
      owner,
      "🆕 The next message you send starts a fresh session (a new conversation). Anything pending stays pending.",
    );
  });

  composer.command("steps", async () => {
    const session = currentSession(deps);
    if (!session) return void (await deps.outbox.send(owner, "No session yet: send /agent &lt;goal&gt; to start one."));
    const cps = session.checkpoints();
    const text = formatSteps(cps);
    const open = cps.filter((c) => !c.reviewed).slice(-REWIND_BUTTONS);
    const data = deps.tokens.issue(
      open.map((c) => ({
        action: "rewind" as const,
        subject: session.id,
        item: String(c.n),
        digest: String(cps.length),
        owner,
      })),
    );
    const rows = open.map((c, i) => [{ text: `⏪ Rewind to ${c.n}`, callback_data: data[i]! }]);
    await deps.outbox.send(
      owner,
      `🪜 <b>Steps</b> of session <code>${escapeHtml(session.id)}</code>\n<pre>${escapeHtml(text.slice(0, 3500))}</pre>`,
      rows.length ? { inline_keyboard: rows } : undefined,
    );
  });

  composer.command("rewind", async (ctx) => {
    const n = Number(ctx.match.trim());
    if (!Number.isInteger(n) || n < 1)
      return void (await deps.outbox.send(owner, "Usage: /rewind N — see the checkpoint numbers with /steps."));
    await rewind(deps, n);
  });

  composer.filter(
    pressed("rewind"),
    answerWith(async (ctx) => {
      const button = ctx.button!;
      deps.tokens.revokeSubject(button.subject);
      await rewind(deps, Number(button.item), button.subject);
      return "Rewound.";
    }),
  );

  composer.filter(
    pressed("goal-continue", "goal-review", "goal-discard"),
    answerWith((ctx) => deps.launcher.goalPress(ctx.button!)),
  );

  // Plain text that no earlier feature took (a rejection reason is taken by the review feature first).
  composer.on("message:text", async (ctx, next) => {
    if (ctx.message.text.startsWith("/")) return next();
    if ((await deps.launcher.followUp(ctx.message.text)) === "no-session") return next();
  });

  return {
    name: "sessions",
    commands: [
      { command: "new", description: "Start a fresh session (a new conversation)" },
      { command: "steps", description: "The checkpoints of this session, with Rewind" },
      { command: "rewind", description: "Take the pending changes back to checkpoint N" },
    ],
    composer,
  };
};

function currentSession(deps: BotDeps) {
  const id = deps.launcher.sessionState().session;
  try {
    return id ? sessionFor(deps.runtime, id) : null;
  } catch {
    return null;
  }
}

/** Rewinds the current (or given) session and shows the changeset it leaves, as a new card. */
async function rewind(deps: BotDeps, n: number, sessionId?: string): Promise<void> {
  const owner = deps.config.ownerId;
  if (deps.gate.active)
    return void (await deps.outbox.send(owner, "A run is going; rewind when it ends (or /cancel it)."));
  try {
    const session = sessionId ? sessionFor(deps.runtime, sessionId) : currentSession(deps);
    if (!session) return void (await deps.outbox.send(owner, "No session yet: send /agent &lt;goal&gt; to start one."));
    const result = rewindSession(deps.runtime, session, n);
    await deps.outbox.send(
      owner,
      `⏪ Back at checkpoint ${n}: ${result.droppedCheckpoints} later checkpoint(s) and ${result.droppedMessages} later message(s) dropped. Your next message continues from here.`,
    );
    if (result.changeset) await deps.review.present(result.changeset);
    else await deps.outbox.send(owner, "Nothing is staged at that point.");
  } catch (error) {
    if (!CheckpointError.isInstance(error)) throw error;
    await deps.outbox.send(owner, `⚠️ ${escapeHtml(error.message)}`);
  }
}
