import { z } from "zod";
import { checkWholeContent } from "./edit/content-checks.ts";
import { elisionRefusal } from "./edit/elision.ts";
import { DEFAULT_STYLE, encodeText } from "../core/text.ts";
import { assertWithinCap, originOf, target } from "./staging-helpers.ts";
import type { PencilTool } from "./tool.ts";
import { ToolError } from "../core/errors/tool-error.ts";

const input = z.object({
  path: z.string().describe("Path of the new file, relative to the workspace root."),
  content: z.string().describe("The whole content of the new file."),
});

/** `create_file`: stages a new file; fails when something already exists there. */
export function createCreateFileTool(): PencilTool<z.infer<typeof input>> {
  return {
    name: "create_file",
    description:
      "Create a new file with the given content. The change is staged for the user's review, not written. Fails if the file exists: use edit_file or write_file for existing files.",
    inputSchema: input,
    claims: ({ path }) => [{ path, access: "write" }],
    async execute({ path, content }, ctx) {
      const { resolved, display } = target(ctx, path);
      const st = ctx.fs.stat(resolved.real);
      if (st) {
        throw new ToolError(
          st.kind === "dir"
            ? `${display} is an existing directory. Choose a file path inside it.`
            : `${display} already exists. Read it with read_file, then use edit_file (or write_file to replace it).`,
        );
      }
      const checked = checkWholeContent(display, null, content.replace(/\r\n/g, "\n"));
      const refusal = elisionRefusal(display, null, checked.text, "create_file");
      if (refusal) throw new ToolError(refusal);
      const bytes = encodeText(checked.text, DEFAULT_STYLE);
      assertWithinCap(ctx, display, bytes);
      ctx.fs.writeBytes(resolved.real, bytes, { mode: 0o644, origin: originOf(ctx, "create_file", checked.notes) });
      return `Staged create: ${display}${checked.notes.length ? `. Note: ${checked.notes.join("; ")}; read_file to check the result.` : ""}`;
    },
  };
}
