import { z } from "zod";
import { sha256 } from "../core/hash.ts";
import { isBinary, decodeText } from "../core/text.ts";
import { missingPathMessage } from "./path-near-miss.ts";
import { StagedIndex } from "../core/policy/walk.ts";
import { displayPath, resolveInWorkspace } from "../core/workspace.ts";
import type { PencilTool, ToolContext } from "./tool.ts";
import { ToolError } from "../core/errors/tool-error.ts";

const inputSchema = z.object({
  path: z.string().describe("File to read, relative to the workspace root."),
  offset: z.number().int().min(1).optional().describe("First line to show (1-based). Default 1."),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("How many lines to show. Default and maximum: the read cap (2000 lines unless configured)."),
});

/** Input of the `read_file` tool. */
export type ReadFileInput = z.infer<typeof inputSchema>;

/** Files over maxFileBytes are read in slices only up to this many times that limit: beyond it, reading is refused. */
const SLICE_CEILING_FACTOR = 32;

/** Creates the `read_file` tool: numbered lines of a file as the staged view has it (deleted → staged → disk). */
export function createReadFileTool(): PencilTool<ReadFileInput> {
  return {
    name: "read_file",
    description:
      "Read a text file as numbered lines (`     1\\tline`). Shows the staged version when this session changed it. " +
      "Long files are shown a window at a time: use offset and limit to read on. Read a file before editing it.",
    inputSchema,
    readsEach: true,
    claims: (input) => [{ path: input.path, access: "read" }],
    execute: async (input, ctx) => readFile(input, ctx),
  };
}

function readFile(input: ReadFileInput, ctx: ToolContext): string {
  const real = resolveInWorkspace(ctx.ws, input.path).real;
  const shown = displayPath(ctx.ws, real);
  const staged = StagedIndex.of(ctx.fs);
  const st = ctx.fs.stat(real);
  if (!st) {
    if (staged.isDeleted(real))
      throw new ToolError(
        `${shown} is staged for deletion in this session, so it no longer exists in the view. Use create_file to bring it back.`,
      );
    throw new ToolError(notFound(ctx, real, shown));
  }
  if (st.kind === "dir")
    throw new ToolError(
      `${shown} is a directory, not a file. Use list_files with path "${shown}" to see what is in it.`,
    );
  if (st.kind !== "file")
    throw new ToolError(`${shown} is not a regular file (a device, socket or pipe); it cannot be read.`);
  const sliced = input.offset !== undefined || input.limit !== undefined;
  const max = ctx.limits.maxFileBytes;
  if (st.size > max && (!sliced || st.size > max * SLICE_CEILING_FACTOR)) {
    const tooBig = `${shown} is ${fmt(st.size)} bytes, over the ${fmt(max)}-byte limit for reading it whole.`;
    if (st.size > max * SLICE_CEILING_FACTOR)
      throw new ToolError(
        `${tooBig} It is too large to read here even in slices: use search to find the lines you need.`,
      );
    throw new ToolError(
      `${tooBig} Read a slice with offset and limit (e.g. offset=1, limit=200), or use search with path "${shown}" to find the lines you need.`,
    );
  }
  // FileOps reads whole files, so a slice of a large file still loads it once (bounded by the ceiling above).
  const bytes = ctx.fs.readBytes(real);
  ctx.reads.record(
    real,
    shown,
    staged.hasContent(real) ? "staged" : { size: st.size, mtimeMs: st.mtimeMs, hash: sha256(bytes) },
  );
  if (bytes.length === 0) return `(${shown} is empty: 0 bytes)`;
  if (isBinary(bytes)) return `(${shown} is binary, ${fmt(bytes.length)} bytes; not shown)`;
  const decoded = decodeText(bytes)!;
  return numbered(decoded.text, input, ctx, shown);
}

function numbered(text: string, input: ReadFileInput, ctx: ToolContext, shown: string): string {
  const lines = text.split("\n");
  // A final newline ends the last line; it does not start an empty one.
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const total = lines.length;
  const offset = input.offset ?? 1;
  if (offset > total) {
    throw new ToolError(
      `${shown} has ${fmt(total)} line${total === 1 ? "" : "s"}; offset ${fmt(offset)} is past the end. Use an offset from 1 to ${fmt(total)}.`,
    );
  }
  const cap = ctx.limits.readLineCap;
  const limit = Math.min(input.limit ?? cap, cap);
  const end = Math.min(total, offset - 1 + limit);
  const out: string[] = [];
  for (let n = offset; n <= end; n++) {
    out.push(`${String(n).padStart(6)}\t${cutLine(lines[n - 1]!, ctx.limits.maxLineChars)}`);
  }
  if (end < total) {
    const capped = input.limit !== undefined && input.limit > cap ? ` (at most ${fmt(cap)} lines per read)` : "";
    out.push(`[Lines ${fmt(offset)}-${fmt(end)} of ${fmt(total)} shown${capped}. Read on with offset=${end + 1}.]`);
  }
  return out.join("\n");
}

/** `line` cut to `max` characters with a marker giving its full length; unchanged when it fits. */
export function cutLine(line: string, max: number): string {
  if (line.length <= max) return line;
  return `${line.slice(0, max)}… [line cut: ${fmt(line.length)} chars]`;
}

/** The "not found" message, with near misses: the same name in another case or directory, or a name a typo away. */
function notFound(ctx: ToolContext, real: string, shown: string): string {
  return missingPathMessage(ctx, real, shown, "Use list_files or search to find the right path.");
}

function fmt(n: number): string {
  return n.toLocaleString("en-US");
}
