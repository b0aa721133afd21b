import { Composer } from "grammy";
import { findEntry, type JournalEntry } from "../../../core/apply/journal.ts";
import { undoInWorkspace } from "../../../app/undo-changeset.ts";
import { answerWith } from "../buttons.ts";
import { pressed, type FeatureFactory, type PencilContext } from "../context.ts";
import { shortPath } from "../diff-delivery.ts";
import { escapeHtml, htmlToPlain } from "../html.ts";
import { takeLines } from "../split-text.ts";

const LOG_SHOWN = 10;
/** Visible characters a report may use, under Telegram's 4,096. */
const MESSAGE_ROOM = 3900;

/** /log (recent changesets) and /undo [ID] (revert an apply, after a confirming tap). */
export const historyFeature: FeatureFactory = (deps) => {
  const composer = new Composer<PencilContext>();
  const owner = deps.config.ownerId;
  const journalDir = deps.runtime.journalDir;

  composer.command("log", async () => {
    const all = deps.runtime.store.list((file, error) => deps.log(`skipped ${file}: ${error.message}`));
    if (all.length === 0) {
      await deps.outbox.send(owner, "No changesets yet.");
      return;
    }
    const lines = all.slice(0, LOG_SHOWN).map((cs) => {
      const added = cs.files.reduce((n, f) => n + f.added, 0);
      const removed = cs.files.reduce((n, f) => n + f.removed, 0);
      return `<code>${escapeHtml(cs.id)}</code> ${cs.createdAt.replace("T", " ").slice(0, 16)} <b>${cs.status}</b> · ${cs.files.length} files +${added} −${removed}\n<i>${escapeHtml(cs.goal.split("\n", 1)[0]!.slice(0, 100))}</i>`;
    });
    const more = all.length > LOG_SHOWN ? `\n… ${all.length - LOG_SHOWN} older` : "";
    await deps.outbox.send(owner, `📜 <b>Changesets</b>, newest first\n\n${lines.join("\n\n")}${more}`);
  });

  composer.command("undo", async (ctx) => {
    const ref = ctx.match.trim();
    const entry = undoable(journalDir, ref || undefined, deps.runtime.ws.root);
    if (!entry) {
      await deps.outbox.send(
        owner,
        ref
          ? `Nothing to undo for <code>${escapeHtml(ref)}</code>: no applied changeset with that id.`
          : "Nothing to undo: no applied changeset in the journal.",
      );
      return;
    }
    const [confirm] = deps.tokens.issue([
      { action: "undo", subject: entry.applyId, item: entry.changesetId, digest: entry.updatedAt, owner },
    ]);
    const files =
      entry.files
        .slice(0, 20)
        .map((f) => `<code>${escapeHtml(shortPath(f.path))}</code>`)
        .join(", ") + (entry.files.length > 20 ? ` (+${entry.files.length - 20} more)` : "");
    await deps.outbox.send(
      owner,
      `↩️ Undo the apply of <code>${escapeHtml(entry.changesetId)}</code> (<i>${escapeHtml(entry.goal.slice(0, 200))}</i>) in <code>${escapeHtml(entry.workspace)}</code>?\nIt puts back ${entry.files.length} file(s): ${files}. Files edited since are kept as they are.`,
      { inline_keyboard: [[{ text: "↩️ Undo", callback_data: confirm! }]] },
    );
  });

  composer.filter(
    pressed("undo"),
    answerWith(async (ctx) => {
      const b = ctx.button!;
      const entry = undoable(journalDir, b.subject, deps.runtime.ws.root);
      deps.tokens.revoke(b.token);
      if (!entry || entry.applyId !== b.subject || entry.updatedAt !== b.digest) return "This is no longer pending.";
      const result = undoInWorkspace(deps.runtime, entry.applyId);
      const lines = [
        ...result.reverted.map((p) => `✅ reverted <code>${escapeHtml(shortPath(p))}</code>`),
        ...result.refused.map(
          (r) => `⚠️ kept <code>${escapeHtml(shortPath(r.path))}</code>: ${escapeHtml(r.reason.slice(0, 300))}`,
        ),
      ];
      const head = `↩️ Undo of <code>${escapeHtml(result.changesetId)}</code>: <b>${result.state}</b>`;
      const shown = takeLines(
        [head, ...lines],
        MESSAGE_ROOM,
        (n) => `… ${n} more files (pencil log shows them all)`,
        (t) => htmlToPlain(t).length,
      );
      await deps.outbox.send(owner, shown.join("\n"));
      return result.refused.length ? "Undone, with files kept." : "Undone.";
    }),
  );

  return {
    name: "history",
    commands: [
      { command: "log", description: "Recent changesets" },
      { command: "undo", description: "Revert an applied changeset (the latest, or /undo ID)" },
    ],
    composer,
  };
};

/** The newest undoable journal entry of this workspace, or the one `ref` names (apply id or changeset id). */
function undoable(journalDir: string, ref: string | undefined, workspace: string): JournalEntry | undefined {
  return findEntry(
    journalDir,
    (e) =>
      e.workspace === workspace &&
      (e.state === "applied" || e.state === "partially-undone") &&
      (!ref || e.applyId === ref || e.changesetId === ref),
  );
}
