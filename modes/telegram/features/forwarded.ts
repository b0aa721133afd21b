import { Composer } from "grammy";
import type { FeatureFactory, PencilContext } from "../context.ts";

/**
 * A forwarded message carries someone else's words: a command in it (`/agent …`
 * forwarded from a chat or channel) starts nothing. Other forwards pass on untouched
 * (the brain may keep them as notes); forwarded media are judged in media.ts.
 */
export const forwardedFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  composer.on("message:text", async (ctx, next) => {
    if (!ctx.message.forward_origin || !ctx.message.text.trimStart().startsWith("/")) return next();
    await deps.outbox.send(
      deps.config.ownerId,
      "↪️ That message was forwarded: a command in it is someone else's words, so it starts nothing. To run it, send the command yourself.",
    );
  });
  return { name: "forwarded", commands: [], composer };
};
