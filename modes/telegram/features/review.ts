import { Composer } from "grammy";
import { answerWith } from "../buttons.ts";
import { pressed, type FeatureFactory, type PencilContext } from "../context.ts";

/** The changeset card's buttons, review/discard offers, and rejection reasons sent as messages. */
export const reviewFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  composer.filter(
    pressed(
      "diff",
      "approve",
      "reject",
      "approve-all",
      "approve-all-commit",
      "reject-all",
      "skip-reason",
      "review",
      "discard",
      "hunks",
      "hunk-keep",
      "hunk-drop",
      "apply-kept",
    ),
    answerWith((ctx) => deps.review.press(ctx.button!, ctx.callbackQuery?.message?.message_id)),
  );
  composer.on("message:text", async (ctx, next) => {
    if (ctx.message.text.startsWith("/")) return next();
    const taken = await deps.review.reason(ctx.message.text, ctx.message.reply_to_message?.message_id);
    if (!taken) return next();
  });
  return { name: "review", commands: [], composer };
};
