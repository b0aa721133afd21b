import { z } from "zod";
import { checkWholeContent } from "./edit/content-checks.ts";
import { elisionRefusal } from "./edit/elision.ts";
import { applyHunks, parseApplyPatch, type PatchOp } from "./edit/patch-format.ts";
import { DEFAULT_STYLE, encodeText, type TextStyle } from "../core/text.ts";
import { assertWithinCap, loadTextForChange, originOf, target } from "./staging-helpers.ts";
import type { PencilTool } from "./tool.ts";
import type { PathClaim } from "../core/policy/claims.ts";
import { PatchError } from "../core/errors/patch-error.ts";
import { ToolError } from "../core/errors/tool-error.ts";

const input = z.object({
  input: z
    .string()
    .describe(
      "The patch: '*** Begin Patch', then '*** Add File: <path>' (lines starting with +), '*** Update File: <path>' (optional '*** Move to: <path>', then hunks: '@@ <line to find>' and lines starting with ' ' context, '-' removed, '+' added) or '*** Delete File: <path>', then '*** End Patch'.",
    ),
});

/** The operations of a patch, or null when it cannot be read (execute then says why). */
function opsOf(text: string): PatchOp[] | null {
  try {
    return parseApplyPatch(text);
  } catch {
    // Not a patch in this format: null, and the caller tries the unified diff.
    return null;
  }
}

/**
 * `apply_patch`: the `*** Begin Patch` format (add, update with context, delete,
 * move), staged through the overlay like edit_file. Every path a patch touches,
 * a move's source and destination both, is declared before it runs, so the
 * policy judges each; an update needs a prior read, as an edit does. All of a
 * patch is staged or none of it.
 */
export function createApplyPatchTool(): PencilTool<z.infer<typeof input>> {
  return {
    name: "apply_patch",
    description:
      "Apply a patch in the '*** Begin Patch' format to add, update, move or delete files. Updates need a prior read_file of the file. Staged for review, not written; all of a patch is staged or none of it.",
    inputSchema: input,
    claims: ({ input: text }) =>
      (opsOf(text) ?? []).flatMap((op): PathClaim[] => [
        { path: op.path, access: "write" },
        ...(op.kind === "update" && op.moveTo !== null ? [{ path: op.moveTo, access: "write" as const }] : []),
      ]),
    async execute({ input: text }, ctx) {
      let ops: PatchOp[];
      try {
        ops = parseApplyPatch(text);
      } catch (error) {
        if (PatchError.isInstance(error)) throw new ToolError(`apply_patch: ${error.message} Nothing was staged.`);
        throw error;
      }
      // Everything is worked out first; nothing is staged until every operation applies.
      const staged = new Map<string, { display: string; text: string | null; mode: number; style: TextStyle }>();
      const current = (real: string, display: string) => {
        const planned = staged.get(real);
        if (planned) return planned.text === null ? null : planned;
        if (ctx.fs.stat(real) === null) return null;
        const { st, decoded } = loadTextForChange(ctx, real, display);
        return { display, text: decoded.text, mode: st.mode, style: decoded.style };
      };
      const answers: string[] = [];
      const notes: string[] = [];
      ops.forEach((op, n) => {
        const where = ops.length > 1 ? ` (operation ${n + 1} of ${ops.length})` : "";
        const { resolved, display } = target(ctx, op.path);
        const real = resolved.real;
        try {
          if (op.kind === "add") {
            const planned = staged.get(real);
            if (planned ? planned.text !== null : ctx.fs.stat(real) !== null)
              throw new ToolError(
                `${display} already exists${where}. Use "*** Update File: ${display}" with hunks to change it (read_file it first).`,
              );
            const checked = checkWholeContent(display, null, op.content);
            const refusal = elisionRefusal(display, null, checked.text, "apply_patch");
            if (refusal) throw new ToolError(refusal);
            notes.push(...checked.notes.map((x) => `${display}: ${x}`));
            staged.set(real, { display, text: checked.text, mode: 0o644, style: DEFAULT_STYLE });
            answers.push(`Staged create: ${display}`);
            return;
          }
          // A deletion needs no read (as delete_file): only that the file is there.
          if (op.kind === "delete") {
            const planned = staged.get(real);
            const st = ctx.fs.stat(real);
            if ((planned && planned.text === null) || (!planned && st?.kind !== "file"))
              throw new ToolError(
                `${display} ${st?.kind === "dir" ? "is a directory" : "does not exist"}${where}; nothing to delete. Use list_files to check the path.`,
              );
            staged.set(real, { display, text: null, mode: st?.mode ?? 0o644, style: DEFAULT_STYLE });
            answers.push(`Staged delete: ${display}`);
            return;
          }
          const file = current(real, display);
          if (file === null || file.text === null)
            throw new ToolError(
              `${display} does not exist${where}. Use "*** Add File: ${display}" to create it, or list_files to find the right path.`,
            );
          let after = applyHunks(file.text, op.hunks, display);
          const checked = checkWholeContent(display, file.text, after);
          after = checked.text;
          notes.push(...checked.notes.map((x) => `${display}: ${x}`));
          if (op.moveTo === null) {
            staged.set(real, { ...file, text: after });
            answers.push(`Staged edit: ${display}`);
            return;
          }
          const to = target(ctx, op.moveTo);
          const there = staged.get(to.resolved.real);
          if (there ? there.text !== null : ctx.fs.stat(to.resolved.real) !== null)
            throw new ToolError(`${display} cannot be moved to ${to.display}${where}: ${to.display} already exists.`);
          staged.set(real, { ...file, text: null });
          staged.set(to.resolved.real, { display: to.display, text: after, mode: file.mode, style: file.style });
          answers.push(`Staged delete: ${display}`, `Staged create: ${to.display} (moved from ${display})`);
        } catch (error) {
          if (PatchError.isInstance(error))
            throw new ToolError(
              `apply_patch${where}: ${error.message}${ops.length > 1 ? " (no operation of the patch was staged)" : ""}`,
            );
          if (ToolError.isInstance(error) && ops.length > 1)
            throw new ToolError(`apply_patch${where}: ${error.message} No operation of the patch was staged.`);
          throw error;
        }
      });
      const encoded = [...staged].map(([real, s]) => {
        const bytes = s.text === null ? null : encodeText(s.text, s.style);
        if (bytes) assertWithinCap(ctx, s.display, bytes);
        return { real, bytes, mode: s.mode };
      });
      const origin = originOf(ctx, "apply_patch", notes);
      for (const { real, bytes, mode } of encoded) {
        if (bytes === null) ctx.fs.remove(real, { origin });
        else ctx.fs.writeBytes(real, bytes, { mode, origin });
      }
      return `${answers.join("\n")}${notes.length ? `\nNote: ${notes.join("; ")}; read_file to check the result.` : ""}`;
    },
  };
}
