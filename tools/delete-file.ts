import { z } from "zod";
import { originOf, target } from "./staging-helpers.ts";
import type { PencilTool } from "./tool.ts";
import { ToolError } from "../core/errors/tool-error.ts";

const input = z.object({
  path: z.string().describe("Path of the file to delete, relative to the workspace root."),
});

/** `delete_file`: stages the deletion of one file (never a directory). */
export function createDeleteFileTool(): PencilTool<z.infer<typeof input>> {
  return {
    name: "delete_file",
    description:
      "Delete a file. Staged for review, not written. Directories cannot be deleted; delete their files one by one.",
    inputSchema: input,
    claims: ({ path }) => [{ path, access: "write" }],
    async execute({ path }, ctx) {
      const { resolved, display } = target(ctx, path);
      const st = ctx.fs.stat(resolved.real);
      if (!st)
        throw new ToolError(
          `${display} does not exist (or is already staged for deletion). Use list_files to check the path.`,
        );
      if (st.kind !== "file") throw new ToolError(`${display} is a directory. Delete the files in it one by one.`);
      ctx.fs.remove(resolved.real, { origin: originOf(ctx, "delete_file") });
      return `Staged delete: ${display}`;
    },
  };
}
