import { z } from "zod";
import { DEFAULT_STYLE, encodeText } from "../text.ts";
import { assertWithinCap, loadTextForChange, originOf, target } from "./staging-helpers.ts";
import type { PencilTool } from "./tool.ts";

const input = z.object({
  path: z.string().describe("Path of the file, relative to the workspace root."),
  content: z.string().describe("The whole new content of the file."),
});

/** `write_file`: stages a whole-file write; an existing file must have been read first and keeps its line endings, BOM and mode. */
export function createWriteFileTool(): PencilTool<z.infer<typeof input>> {
  return {
    name: "write_file",
    description: "Replace the whole content of a file (or create it). Staged for review, not written. An existing file must be read with read_file first. Prefer edit_file for small changes.",
    inputSchema: input,
    claims: ({ path }) => [{ path, access: "write" }],
    async execute({ path, content }, ctx) {
      const { resolved, display } = target(ctx, path);
      const exists = ctx.fs.stat(resolved.real) !== null;
      const current = exists ? loadTextForChange(ctx, resolved.real, display) : null;
      const bytes = encodeText(content.replace(/\r\n/g, "\n"), current?.decoded.style ?? DEFAULT_STYLE);
      assertWithinCap(ctx, display, bytes);
      ctx.fs.writeBytes(resolved.real, bytes, { mode: current?.st.mode ?? 0o644, origin: originOf(ctx, "write_file") });
      return `Staged write: ${display}`;
    },
  };
}
