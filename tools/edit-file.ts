import { z } from "zod";
import { checkNewString } from "./edit/content-checks.ts";
import { planEdit } from "./edit/edit-match.ts";
import { editElisionRefusal } from "./edit/elision.ts";
import { encodeText } from "../core/text.ts";
import { assertWithinCap, loadTextForChange, originOf, target } from "./staging-helpers.ts";
import type { PencilTool, ToolContext } from "./tool.ts";
import { ToolError } from "../core/errors/tool-error.ts";

const fields = {
  path: z.string().describe("Path of the file, relative to the workspace root."),
  old_string: z
    .string()
    .describe("The exact text to replace, copied from read_file output without the line-number prefix."),
  new_string: z.string().describe("The text to put in its place."),
  replace_all: z.boolean().optional().describe("Replace every occurrence instead of exactly one."),
};

/** What the model is shown: one replacement. */
const shown = z.object(fields);

const oneEdit = z.object({
  old_string: fields.old_string,
  new_string: fields.new_string,
  replace_all: fields.replace_all,
});

/**
 * What is accepted: one replacement; or `edits`, several applied in order as one
 * staged change; or `insert_line` with new_string (str_replace_editor's insert:
 * after that line, 0 for the top).
 */
const accepted = z
  .object({
    path: fields.path,
    old_string: fields.old_string.optional(),
    new_string: fields.new_string.optional(),
    replace_all: fields.replace_all,
    edits: z.array(oneEdit).min(1).optional(),
    insert_line: z.number().int().min(0).optional(),
  })
  .superRefine((v, ctx) => {
    if (v.edits !== undefined) return;
    if (v.insert_line === undefined && v.old_string === undefined)
      ctx.addIssue({ code: "custom", path: ["old_string"], message: "old_string is missing" });
    if (v.new_string === undefined)
      ctx.addIssue({ code: "custom", path: ["new_string"], message: "new_string is missing" });
  });

type EditInput = z.infer<typeof accepted>;

/** `edit_file`: stages a replacement in a file read earlier in the session; exact, or whitespace-tolerant when exactly one place fits. */
export function createEditFileTool(): PencilTool<EditInput> {
  return {
    name: "edit_file",
    description:
      "Replace old_string with new_string in a file you have read with read_file. old_string must match exactly once (include surrounding lines to make it unique) unless replace_all is true. Staged for review, not written.",
    inputSchema: accepted,
    modelSchema: shown,
    claims: ({ path }) => [{ path, access: "write" }],
    async execute(args, ctx) {
      const edits =
        args.edits ??
        (args.insert_line !== undefined
          ? [{ insert_line: args.insert_line, new_string: args.new_string ?? "" }]
          : [{ old_string: args.old_string ?? "", new_string: args.new_string ?? "", replace_all: args.replace_all }]);
      for (const e of edits) {
        if ("old_string" in e) assertEditSize(ctx, "old_string", e.old_string);
        assertEditSize(ctx, "new_string", e.new_string);
      }
      const { resolved, display } = target(ctx, args.path);
      const { st, decoded } = loadTextForChange(ctx, resolved.real, display);
      let text = decoded.text;
      const notes: string[] = [];
      let count = 0;
      for (let i = 0; i < edits.length; i++) {
        const e = edits[i]!;
        // One of several edits failing fails them all: nothing is staged, and the answer says which.
        const where = edits.length > 1 ? `edit ${i + 1} of ${edits.length}: ` : "";
        const whole = ` Nothing was staged${edits.length > 1 ? " (the edits are applied together or not at all)" : ""}.`;
        try {
          const step =
            "insert_line" in e ? insertAt(text, e.insert_line!, e.new_string, display) : replaceIn(text, e, display);
          text = step.text;
          count += step.count;
          notes.push(...step.notes.map((n) => where + n));
        } catch (error) {
          if (!ToolError.isInstance(error)) throw error;
          throw new ToolError(`${where}${error.message}${edits.length > 1 ? whole : ""}`);
        }
      }
      if (text === decoded.text)
        throw new ToolError(`The edit would leave ${display} unchanged (new_string equals the text it replaces).`);
      if (decoded.text.endsWith("\n") && !text.endsWith("\n") && text !== "") {
        text += "\n";
        notes.push("the file's final newline was kept");
      }
      const bytes = encodeText(text, decoded.style);
      assertWithinCap(ctx, display, bytes);
      ctx.fs.writeBytes(resolved.real, bytes, { mode: st.mode, origin: originOf(ctx, "edit_file", notes) });
      const many = count > 1 ? ` (${count} replacements${edits.length > 1 ? ` from ${edits.length} edits` : ""})` : "";
      return `Staged edit: ${display}${many}${notes.length ? `. Note: ${notes.join("; ")}; read_file to check the result.` : ""}`;
    },
  };
}

/** One replacement on the current text: its checks, the match, and the placeholder refusal. */
function replaceIn(
  text: string,
  e: { old_string: string; new_string: string; replace_all?: boolean | undefined },
  display: string,
): { text: string; count: number; notes: string[] } {
  const oldString = e.old_string.replace(/\r\n/g, "\n");
  const checked = checkNewString(display, text, oldString, e.new_string.replace(/\r\n/g, "\n"));
  if (checked.whole !== null) return { text: checked.whole, count: 1, notes: checked.notes };
  const newString = checked.newString;
  if (oldString === "")
    throw new ToolError(
      "old_string is empty. To add text, include a nearby existing line in old_string and repeat it in new_string; to replace the file use write_file.",
    );
  if (oldString === newString) throw new ToolError("old_string and new_string are identical: nothing would change.");
  const plan = planEdit({ text, oldString, newString, replaceAll: e.replace_all ?? false, display });
  if (plan.kind === "failed") throw new ToolError(plan.message);
  const elision = editElisionRefusal(display, oldString, newString, plan.line);
  if (elision) throw new ToolError(elision);
  if (plan.text === text)
    throw new ToolError(
      `The edit would leave ${display} unchanged (new_string equals the text it replaces at line ${plan.line}).`,
    );
  return { text: plan.text, count: plan.count, notes: [...checked.notes, ...(plan.tolerance ? [plan.tolerance] : [])] };
}

/** new_string put after line `line` (0: at the top), as str_replace_editor's insert does. */
function insertAt(
  text: string,
  line: number,
  newString: string,
  display: string,
): { text: string; count: number; notes: string[] } {
  const lines = text.split("\n");
  const trailing = text.endsWith("\n");
  if (trailing) lines.pop();
  if (line > lines.length)
    throw new ToolError(`insert_line ${line} is past the end of ${display}, which has ${lines.length} lines.`);
  const checked = checkNewString(display, text, "", newString.replace(/\r\n/g, "\n"));
  const inserted = checked.newString.replace(/\n$/, "").split("\n");
  lines.splice(line, 0, ...inserted);
  return { text: lines.join("\n") + (trailing ? "\n" : ""), count: 1, notes: checked.notes };
}

/** An edit string larger than any file an edit may change cannot match; say so before any work on it. */
function assertEditSize(ctx: ToolContext, field: string, value: string): void {
  const max = ctx.limits.maxFileBytes;
  if (value.length > max) {
    throw new ToolError(
      `${field} is ${value.length.toLocaleString("en-US")} characters, over the ${max.toLocaleString("en-US")}-character limit of an edit (the largest file the agent may change). Edit a smaller region, a few lines at a time.`,
    );
  }
}
