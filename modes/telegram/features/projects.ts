import { Composer } from "grammy";
import { sha256 } from "../../../core/hash.ts";
import { answerWith } from "../buttons.ts";
import { pressed, type FeatureFactory, type PencilContext } from "../context.ts";
import { escapeHtml } from "../html.ts";
import type { Keyboard } from "../outbox.ts";
import { readListedWorkspaces } from "../projects.ts";

/**
 * /projects: the workspaces listed in the user's settings (`telegram.workspaces`) as
 * buttons; a press makes that one active. A button carries only a token bound to the
 * listed name and path it was shown for, so nothing typed in chat can name a path.
 */
export const projectsFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  const owner = deps.config.ownerId;

  composer.command("projects", async () => {
    const views = deps.projects.views();
    const problems = readListedWorkspaces(deps.runtime.pencilHome, deps.runtime.ws.home).warnings.map(
      (w) => `⚠️ ${escapeHtml(w)}`,
    );
    const warned = problems.length ? `\n${problems.join("\n")}` : "";
    const current = `📍 Now: <b>${escapeHtml(deps.projects.activeName)}</b> <code>${escapeHtml(deps.runtime.ws.root)}</code>`;
    if (views.length === 0) {
      await deps.outbox.send(
        owner,
        `${current}${warned}\n\nNo other workspace is listed. List them in your own settings file, <code>${escapeHtml(deps.runtime.pencilHome)}/settings.json</code>:\n<code>{"telegram": {"workspaces": {"api": "~/code/api", "web": "~/code/web"}}}</code>`,
      );
      return;
    }
    const subject = `projects-${Date.now().toString(36)}`;
    const usable = views.filter((v) => !v.missing);
    const data = deps.tokens.issue(
      usable.map((v) => ({ action: "project" as const, subject, item: v.name, digest: sha256(v.root), owner })),
    );
    const keyboard: Keyboard = {
      inline_keyboard: usable.map((v, i) => [{ text: `${v.active ? "✅" : "📁"} ${v.name}`, callback_data: data[i]! }]),
    };
    const lines = views.map(
      (v) =>
        `${v.missing ? "⚠️" : v.active ? "✅" : "📁"} <b>${escapeHtml(v.name)}</b> <code>${escapeHtml(v.path)}</code>${v.missing ? " — missing, not selectable" : ""}`,
    );
    const only =
      usable.length === 1 && usable[0]!.active
        ? "\n<i>It is the only one listed; add more to telegram.workspaces.</i>"
        : "";
    await deps.outbox.send(
      owner,
      `${current}\n\n${lines.join("\n")}${warned}${only}\n\nTap one to work there; pending changesets and runs stay with their workspace.`,
      usable.length ? keyboard : undefined,
    );
  });

  composer.filter(
    pressed("project"),
    answerWith(async (ctx) => {
      const button = ctx.button!;
      const wanted = deps.projects.views().find((v) => v.name === button.item);
      if (!wanted || sha256(wanted.root) !== button.digest)
        return "That workspace is no longer listed as shown; send /projects again.";
      const result = deps.projects.switchTo(button.item, wanted.root);
      if (typeof result === "string") {
        await deps.outbox.send(owner, `⚠️ ${escapeHtml(result)}`);
        return "Not switched.";
      }
      deps.tokens.revokeSubject(button.subject);
      const pending = deps.runtime.store.latestPending(deps.runtime.ws.root);
      const running = deps.gate.active;
      const notes = [
        ...(running ? [`⏳ A run is going here: <i>${escapeHtml(running.goal.slice(0, 200))}</i>`] : []),
        ...(pending ? [`📝 A changeset waits here: /status shows it.`] : []),
      ];
      await deps.outbox.send(
        owner,
        `📍 Now working in <b>${escapeHtml(result.name)}</b> <code>${escapeHtml(result.root)}</code>${notes.length ? `\n${notes.join("\n")}` : ""}`,
      );
      return `Switched to ${result.name}.`;
    }),
  );

  return {
    name: "projects",
    commands: [{ command: "projects", description: "Switch between the workspaces listed in your settings" }],
    composer,
  };
};
