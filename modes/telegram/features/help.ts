import { Composer } from "grammy";
import type { FeatureFactory, PencilContext } from "../context.ts";
import { escapeHtml } from "../html.ts";

/** /start and /help: what Pencil is, where it works, and the commands of every installed feature. */
export const helpFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  composer.command(["start", "help"], async (_ctx) => {
    const lines = deps.commandList.map((c) => `/${c.command} — ${escapeHtml(c.description)}`);
    await deps.outbox.send(
      deps.config.ownerId,
      `✏️ <b>Pencil</b> writes in pencil: every change the agent makes is staged, and nothing reaches the disk until you approve its diff here.\n` +
        `Workspace: <code>${escapeHtml(deps.runtime.ws.root)}</code>\n\n${lines.join("\n")}\n\n` +
        "After a run, just write: plain text is the next turn of the same session.",
    );
  });
  return {
    name: "help",
    commands: [
      { command: "start", description: "What Pencil is and how to use it" },
      { command: "help", description: "The commands" },
    ],
    composer,
  };
};
