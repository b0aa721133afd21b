import { recoverInterrupted } from "../../app/interrupted-runs.ts";
import type { BotDeps } from "./context.ts";
import { escapeHtml } from "./html.ts";

/**
 * After a restart: every run the previous process left mid-way (kill -9, crash)
 * is settled from its session — what it staged up to its last finished step
 * becomes a pending changeset — its stale progress message is closed, and the
 * owner is told which run it was, with a changeset card for what it staged.
 * Returns the ids of the changesets presented.
 */
export async function announceInterrupted(
  deps: Pick<BotDeps, "runtime" | "outbox" | "review" | "config" | "log" | "launcher">,
): Promise<string[]> {
  const owner = deps.config.ownerId;
  const presented: string[] = [];
  const interrupted = await recoverInterrupted(deps.runtime, (id, error) =>
    deps.log(`interrupted session ${id} could not be read: ${error.message}`),
  );
  for (const { session, changeset, checkpoints } of interrupted) {
    deps.launcher.adoptSession(session.id);
    const goal = escapeHtml((session.running?.goal ?? session.goal).slice(0, 300));
    const tag = session.running?.tag;
    if (tag && typeof tag.chat === "number" && typeof tag.message === "number" && tag.message > 0) {
      await deps.outbox.edit(
        tag.chat,
        tag.message,
        `⚠️ <b>Interrupted</b>: <i>${goal}</i>\nPencil stopped while this run was going. See the message below.`,
      );
    }
    const staged = changeset
      ? `It had staged ${changeset.files.length} ${changeset.files.length === 1 ? "file" : "files"} in ${checkpoints} ${checkpoints === 1 ? "step" : "steps"}; they are kept for your review below. Nothing was applied.`
      : "It had staged nothing.";
    await deps.outbox.send(
      owner,
      `⚠️ <b>A run was interrupted</b> when Pencil stopped: <i>${goal}</i> (session <code>${escapeHtml(session.id)}</code>).\n${staged}\nSend a message to continue the session.`,
    );
    if (changeset) {
      await deps.review.present(changeset);
      presented.push(changeset.id);
    }
  }
  return presented;
}
