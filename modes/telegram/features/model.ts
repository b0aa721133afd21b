import { Composer } from "grammy";
import { answerModelCommand } from "../../../app/model-switch.ts";
import type { FeatureFactory, PencilContext } from "../context.ts";
import { escapeHtml } from "../html.ts";

/**
 * /model NAME: the runs the bot starts in the current workspace from now on (the session's next
 * turns, new goals) use NAME, as the terminal's `/model` does for its session; a run already going
 * keeps its model. /model alone names the models in use and the known ones. The choice is kept
 * across restarts; an unknown name changes nothing and says which are known.
 */
export const modelFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  composer.command("model", async (ctx) => {
    const answer = answerModelCommand(deps.runtime, deps.launcher.modelsInUse(), ctx.match.trim(), (model, labels) => {
      deps.launcher.chooseModel(model);
      return labels;
    });
    const mark = answer.switched ? "🔀 " : answer.ok ? "🧠 " : "⚠️ ";
    const going = answer.switched && deps.gate.active ? " The run going now keeps its model." : "";
    await deps.outbox.send(deps.config.ownerId, `${mark}${escapeHtml(answer.text)}${going}`);
  });
  return {
    name: "model",
    commands: [{ command: "model", description: "Show or switch the model (/model NAME) for the next runs" }],
    composer,
  };
};
