import { z } from "zod";
import { encodeText } from "../text.ts";
import { assertWithinCap, loadTextForChange, originOf, target } from "./staging-helpers.ts";
import { ToolError, type PencilTool } from "./tool.ts";

const input = z.object({
  path: z.string().describe("Path of the file, relative to the workspace root."),
  old_string: z.string().describe("The exact text to replace, copied from read_file output without the line-number prefix."),
  new_string: z.string().describe("The text to put in its place."),
  replace_all: z.boolean().optional().describe("Replace every occurrence instead of exactly one."),
});

/** `edit_file`: stages an exact-string replacement in a file read earlier in the session. */
export function createEditFileTool(): PencilTool<z.infer<typeof input>> {
  return {
    name: "edit_file",
    description:
      "Replace old_string with new_string in a file you have read with read_file. old_string must match exactly once (include surrounding lines to make it unique) unless replace_all is true. Staged for review, not written.",
    inputSchema: input,
    claims: ({ path }) => [{ path, access: "write" }],
    async execute(args, ctx) {
      const { resolved, display } = target(ctx, args.path);
      const { st, decoded } = loadTextForChange(ctx, resolved.real, display);
      const oldString = args.old_string.replace(/\r\n/g, "\n");
      const newString = args.new_string.replace(/\r\n/g, "\n");
      if (oldString === "") throw new ToolError("old_string is empty. To add text, include a nearby existing line in old_string and repeat it in new_string; to replace the file use write_file.");
      if (oldString === newString) throw new ToolError("old_string and new_string are identical: nothing would change.");
      const text = decoded.text;
      const count = occurrences(text, oldString);
      if (count === 0) throw new ToolError(notFoundMessage(display, text, oldString));
      if (count > 1 && !args.replace_all) {
        throw new ToolError(`old_string occurs ${count} times in ${display}. Add surrounding lines to make it unique, or set replace_all to true to change all ${count}.`);
      }
      const next = args.replace_all ? text.split(oldString).join(newString) : replaceOnce(text, oldString, newString);
      const bytes = encodeText(next, decoded.style);
      assertWithinCap(ctx, display, bytes);
      ctx.fs.writeBytes(resolved.real, bytes, { mode: st.mode, origin: originOf(ctx, "edit_file") });
      return `Staged edit: ${display}${args.replace_all && count > 1 ? ` (${count} replacements)` : ""}`;
    },
  };
}

function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

function replaceOnce(text: string, needle: string, replacement: string): string {
  const i = text.indexOf(needle);
  return text.slice(0, i) + replacement + text.slice(i + needle.length);
}

/** Explains why old_string was not found, with the likeliest fix. */
function notFoundMessage(display: string, text: string, oldString: string): string {
  const base = `old_string was not found in ${display}.`;
  const lines = oldString.split("\n");
  const prefixed = /^\s*\d+\t/;
  if (lines.filter((l) => l.length > 0).every((l) => prefixed.test(l))) {
    const stripped = lines.map((l) => l.replace(prefixed, "")).join("\n");
    const hint = text.includes(stripped) ? " Without them it matches." : "";
    return `${base} It carries the line-number prefixes that read_file prints ("   12\\t"); copy only the text after the tab.${hint}`;
  }
  const near = whitespaceInsensitiveMatch(text, oldString);
  if (near !== null) {
    return `${base} It differs only in whitespace (indentation, tabs or line breaks) from this text in the file:\n${near}\nCopy the exact text from read_file output and retry.`;
  }
  if (text.toLowerCase().includes(oldString.toLowerCase())) {
    return `${base} It matches when case is ignored; copy the exact capitalisation from read_file output.`;
  }
  return `${base} Read the file again with read_file (it may have changed) and copy old_string exactly, including indentation.`;
}

/** The file's text that equals `needle` once all whitespace runs are collapsed, or null. */
function whitespaceInsensitiveMatch(text: string, needle: string): string | null {
  const tokens = needle.trim().split(/\s+/).filter(Boolean);
  if (tokens.length === 0) return null;
  const pattern = new RegExp(tokens.map(escapeRegExp).join("\\s+"));
  const match = pattern.exec(text);
  return match ? match[0] : null;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
