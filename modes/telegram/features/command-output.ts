import { Composer } from "grammy";
import { answerWith } from "../buttons.ts";
import { pressed, type FeatureFactory, type PencilContext } from "../context.ts";

/** A failed command's "📄 Full output" button: the whole output as a document. */
export const commandOutputFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  composer.filter(
    pressed("command-output"),
    answerWith((ctx) => deps.failures.press(ctx.button!)),
  );
  return { name: "command-output", commands: [], composer };
};
