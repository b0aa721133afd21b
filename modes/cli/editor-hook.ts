import type { AgentRun } from "../../app/agent-run.ts";
import { openStagedInEditor, replaceStagedContent } from "../../app/edit-staged.ts";
import type { Runtime } from "../../app/runtime.ts";
import type { Changeset, FileChange } from "../../core/staging/changeset.ts";
import { visible } from "../../render/visible-text.ts";
import type { CliIO } from "./io.ts";

/** The review's `e` key: returns the file as staged after the owner's edit, or null when nothing changed. */
export type EditHook = (file: FileChange) => Promise<FileChange | null>;

/**
 * The terminal's editor hand-off: opens the staged file in $VISUAL/$EDITOR, and when
 * the owner saved something else, replaces the staged content (re-diffed, marked
 * "edited by you") in `current.cs`, the changeset the review goes on to apply.
 */
export function terminalEditHook(
  io: CliIO,
  runtime: Runtime,
  run: AgentRun | null,
  current: { cs: Changeset },
): EditHook {
  return async (file) => {
    const outcome = openStagedInEditor(file, runtime.env);
    if (outcome.kind === "refused") {
      io.out(`${io.colors.yellow("not edited:")} ${visible(outcome.reason)}\n`);
      return null;
    }
    if (outcome.kind === "unchanged") {
      io.out(`${visible(file.path)}: saved unchanged; the staged content stays as it was.\n`);
      return null;
    }
    current.cs = replaceStagedContent(runtime, current.cs, file.path, outcome.bytes, run);
    const updated = current.cs.files.find((f) => f.path === file.path)!;
    io.out(
      `${io.colors.cyan("edited by you:")} ${visible(file.path)} — the diff below is what would be written now.\n`,
    );
    return updated;
  };
}
