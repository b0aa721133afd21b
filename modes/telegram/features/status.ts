import { Composer } from "grammy";
import { answerWith } from "../buttons.ts";
import { pressed, type FeatureFactory, type PencilContext } from "../context.ts";
import { escapeHtml } from "../html.ts";

/** /status (what is going on and what waits) and /cancel (stop the run, or offer to discard what is pending). */
export const statusFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  const owner = deps.config.ownerId;

  composer.command("status", async () => {
    const lines = [
      `📍 Workspace <b>${escapeHtml(deps.projects.activeName)}</b> <code>${escapeHtml(deps.runtime.ws.root)}</code>`,
    ];
    const active = deps.gate.active;
    if (active)
      lines.push(
        `⏳ ${active.kind}: <i>${escapeHtml(active.goal.slice(0, 200))}</i> (${Math.round((Date.now() - active.startedAt) / 1000)} s)`,
      );
    else lines.push("No run is going.");
    for (const other of deps.projects.activeRuns().filter((r) => r.run !== active)) {
      lines.push(
        `⏳ in <b>${escapeHtml(other.name)}</b>: ${other.run.kind}: <i>${escapeHtml(other.run.goal.slice(0, 200))}</i> (${Math.round((Date.now() - other.run.startedAt) / 1000)} s)`,
      );
    }
    if (deps.launcher.costs) lines.push(`💰 ${escapeHtml(deps.launcher.costs.today())}`);
    if (deps.questions.size) lines.push(`❓ ${deps.questions.size} question(s) wait for your answer.`);
    for (const card of deps.cards.open()) {
      const decided = card.files.filter((f) => f.decision).length;
      const awaited = card.files.filter((f) => f.awaitingReason).length;
      const lost = card.messageId === null ? " (it may not have arrived)" : "";
      lines.push(
        `📝 Card for <code>${escapeHtml(card.changesetId)}</code>${lost}: ${decided} of ${card.files.length} decided${awaited ? `, ${awaited} reason(s) awaited` : ""}.`,
      );
    }
    await deps.outbox.send(owner, lines.join("\n"), active ? deps.launcher.cancelButton(active) : undefined);
    const pending = deps.runtime.store.latestPending(deps.runtime.ws.root);
    // Review is offered unless a card of it is known to have arrived.
    if (pending && !deps.cards.openFor(pending.id).some((card) => card.messageId !== null)) {
      const offer = deps.review.offer(pending, "");
      await deps.outbox.send(owner, offer.html, offer.keyboard);
    }
  });

  composer.command("cancel", async () => {
    const active = deps.gate.active;
    if (active) {
      active.controller.abort();
      await deps.outbox.send(
        owner,
        `⏹ Cancelling <i>${escapeHtml(active.goal.slice(0, 200))}</i>… what it staged so far will be offered for review.`,
      );
      return;
    }
    const pending = deps.runtime.store.latestPending(deps.runtime.ws.root);
    if (!pending) {
      await deps.outbox.send(owner, "Nothing to cancel: no run is going and nothing is pending.");
      return;
    }
    const offer = deps.review.offer(pending, "No run is going.");
    await deps.outbox.send(owner, offer.html, offer.keyboard);
  });

  composer.filter(
    pressed("cancel-run"),
    answerWith((ctx) => deps.launcher.cancelPress(ctx.button!)),
  );

  return {
    name: "status",
    commands: [
      { command: "status", description: "What is running and what waits for you" },
      { command: "cancel", description: "Stop the run, or discard the pending changeset" },
    ],
    composer,
  };
};
