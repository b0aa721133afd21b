import { z } from "zod";
import { planEdit } from "../edit-match.ts";
import { encodeText } from "../text.ts";
import { assertWithinCap, loadTextForChange, originOf, target } from "./staging-helpers.ts";
import { ToolError, type PencilTool, type ToolContext } from "./tool.ts";

const input = z.object({
  path: z.string().describe("Path of the file, relative to the workspace root."),
  old_string: z
    .string()
    .describe("The exact text to replace, copied from read_file output without the line-number prefix."),
  new_string: z.string().describe("The text to put in its place."),
  replace_all: z.boolean().optional().describe("Replace every occurrence instead of exactly one."),
});

/** `edit_file`: stages a replacement in a file read earlier in the session; exact, or whitespace-tolerant when exactly one place fits. */
export function createEditFileTool(): PencilTool<z.infer<typeof input>> {
  return {
    name: "edit_file",
    description:
      "Replace old_string with new_string in a file you have read with read_file. old_string must match exactly once (include surrounding lines to make it unique) unless replace_all is true. Staged for review, not written.",
    inputSchema: input,
    claims: ({ path }) => [{ path, access: "write" }],
    async execute(args, ctx) {
      assertEditSize(ctx, "old_string", args.old_string);
      assertEditSize(ctx, "new_string", args.new_string);
      const { resolved, display } = target(ctx, args.path);
      const { st, decoded } = loadTextForChange(ctx, resolved.real, display);
      const oldString = args.old_string.replace(/\r\n/g, "\n");
      const newString = args.new_string.replace(/\r\n/g, "\n");
      if (oldString === "")
        throw new ToolError(
          "old_string is empty. To add text, include a nearby existing line in old_string and repeat it in new_string; to replace the file use write_file.",
        );
      if (oldString === newString)
        throw new ToolError("old_string and new_string are identical: nothing would change.");
      const plan = planEdit({
        text: decoded.text,
        oldString,
        newString,
        replaceAll: args.replace_all ?? false,
        display,
      });
      if (plan.kind === "failed") throw new ToolError(plan.message);
      if (plan.text === decoded.text)
        throw new ToolError(
          `The edit would leave ${display} unchanged (new_string equals the text it replaces at line ${plan.line}).`,
        );
      const bytes = encodeText(plan.text, decoded.style);
      assertWithinCap(ctx, display, bytes);
      ctx.fs.writeBytes(resolved.real, bytes, { mode: st.mode, origin: originOf(ctx, "edit_file") });
      const many = plan.count > 1 ? ` (${plan.count} replacements)` : "";
      return `Staged edit: ${display}${many}${plan.tolerance ? `. Note: ${plan.tolerance}; read_file to check the result.` : ""}`;
    },
  };
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
