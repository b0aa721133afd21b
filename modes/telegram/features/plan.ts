import { Composer } from "grammy";
import { answerWith } from "../buttons.ts";
import { pressed, type FeatureFactory, type PencilContext } from "../context.ts";

/** /plan <goal>: a structured plan with a toggle per step, Select all / none, and Proceed. */
export const planFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  composer.command("plan", async (ctx) => {
    const goal = ctx.match.trim();
    if (!goal) {
      await deps.outbox.send(
        deps.config.ownerId,
        "Usage: /plan &lt;goal&gt; — e.g. <code>/plan split the config loader into its own module</code>",
      );
      return;
    }
    await deps.launcher.launch("plan", goal);
  });
  composer.filter(
    pressed("plan-toggle", "plan-all", "plan-none", "plan-proceed"),
    answerWith((ctx) => deps.plans.press(ctx.button!)),
  );
  return {
    name: "plan",
    commands: [{ command: "plan", description: "Plan a goal (read-only); pick steps; proceed" }],
    composer,
  };
};
