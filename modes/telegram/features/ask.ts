import { Composer } from "grammy";
import type { FeatureFactory, PencilContext } from "../context.ts";

/** /ask <question>: answers from the code with read-only tools. */
export const askFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  composer.command("ask", async (ctx) => {
    const question = ctx.match.trim();
    if (!question) {
      await deps.outbox.send(
        deps.config.ownerId,
        "Usage: /ask &lt;question&gt; — e.g. <code>/ask where is the config loaded?</code>",
      );
      return;
    }
    await deps.launcher.launch("ask", question);
  });
  return { name: "ask", commands: [{ command: "ask", description: "Ask about the code (read-only)" }], composer };
};
