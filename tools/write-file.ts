import { z } from "zod";
import { checkWholeContent } from "./edit/content-checks.ts";
import { elisionRefusal, removedLines } from "./edit/elision.ts";
import { nearMissRefusal } from "./path-near-miss.ts";
import { DEFAULT_STYLE, encodeText } from "../core/text.ts";
import { assertWithinCap, loadTextForChange, originOf, target } from "./staging-helpers.ts";
import type { PencilTool } from "./tool.ts";
import { ToolError } from "../core/errors/tool-error.ts";

const input = z.object({
  path: z.string().describe("Path of the file, relative to the workspace root."),
  content: z.string().describe("The whole new content of the file."),
});

// A write that removes at least this many lines, and this share of the file, is called out in the answer.
const LARGE_DELETION_LINES = 20;
const LARGE_DELETION_SHARE = 0.3;

/** `write_file`: stages a whole-file write; an existing file must have been read first and keeps its line endings, BOM and mode. */
export function createWriteFileTool(): PencilTool<z.infer<typeof input>> {
  return {
    name: "write_file",
    description:
      "Replace the whole content of a file (or create it). Staged for review, not written. An existing file must be read with read_file first. Prefer edit_file for small changes.",
    inputSchema: input,
    claims: ({ path }) => [{ path, access: "write" }],
    async execute({ path, content }, ctx) {
      const { resolved, display } = target(ctx, path);
      const exists = ctx.fs.stat(resolved.real) !== null;
      // A new file right beside an existing near-namesake is usually a mistyped path: say so instead of creating it.
      if (!exists) {
        const nearMiss = nearMissRefusal(ctx, resolved.real, display, "write_file");
        if (nearMiss) throw new ToolError(nearMiss);
      }
      const current = exists ? loadTextForChange(ctx, resolved.real, display) : null;
      const checked = checkWholeContent(display, current?.decoded.text ?? null, content.replace(/\r\n/g, "\n"));
      const text = checked.text;
      const note = checked.notes.length ? ` Note: ${checked.notes.join("; ")}; read_file to check the result.` : "";
      const refusal = elisionRefusal(display, current?.decoded.text ?? null, text, "write_file");
      if (refusal) throw new ToolError(refusal);
      const bytes = encodeText(text, current?.decoded.style ?? DEFAULT_STYLE);
      assertWithinCap(ctx, display, bytes);
      ctx.fs.writeBytes(resolved.real, bytes, {
        mode: current?.st.mode ?? 0o644,
        origin: originOf(ctx, "write_file", checked.notes),
      });
      if (!current) return `Staged write: ${display}${note ? `.${note}` : ""}`;
      const lost = removedLines(current.decoded.text, text);
      const added = lineCount(text) - (lost.total - lost.count);
      const large = lost.count >= LARGE_DELETION_LINES && lost.count >= lost.total * LARGE_DELETION_SHARE;
      const warning = large
        ? ` It removes ${lost.count} of the file's ${lost.total} lines; if that was not meant, read_file and use edit_file instead.`
        : "";
      return `Staged write: ${display} (+${added} -${lost.count} lines).${warning}${note}`;
    },
  };
}

function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}
