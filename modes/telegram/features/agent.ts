import { Composer } from "grammy";
import type { FeatureFactory, PencilContext } from "../context.ts";

/** /agent <goal>: runs the agent (detached); its changeset comes back as a review card. */
export const agentFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  composer.command("agent", async (ctx) => {
    const goal = ctx.match.trim();
    if (!goal) {
      await deps.outbox.send(
        deps.config.ownerId,
        "Usage: /agent &lt;goal&gt; — e.g. <code>/agent add a --json flag to the log command</code>",
      );
      return;
    }
    await deps.launcher.launch("agent", goal);
  });
  return {
    name: "agent",
    commands: [{ command: "agent", description: "Run the agent on a goal; review its changes here" }],
    composer,
  };
};
