import { Composer } from "grammy";
import { answerWith } from "../buttons.ts";
import { pressed, type FeatureFactory, type PencilContext } from "../context.ts";

/** Allow / Always / Deny on the questions a run asks (a read outside the workspace, a command). */
export const questionsFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  composer.filter(
    pressed("allow", "always", "deny"),
    answerWith((ctx) => deps.questions.answer(ctx.button!)),
  );
  return { name: "questions", commands: [], composer };
};
