import { basename } from "node:path";
import { z } from "zod";
import { globTest, isSecretName, walk, WalkRules } from "../walk.ts";
import { displayPath, isInside, resolveInWorkspace } from "../workspace.ts";
import { ToolError, type PencilTool, type ToolContext } from "./tool.ts";

const inputSchema = z.object({
  path: z.string().optional().describe("Directory to list, relative to the workspace root. Default: the workspace root."),
  pattern: z.string().optional().describe("Only entries matching this glob: `*.ts` matches names at any depth, `src/**/*.ts` is relative to `path`."),
});

/** Input of the `list_files` tool. */
export type ListFilesInput = z.infer<typeof inputSchema>;

// Past the cap the walk only counts, and stops counting here: a huge tree cannot stall the answer.
const COUNT_CEILING = 100_000;

/** Creates the `list_files` tool: the tree under a directory, as the staged view has it, respecting .gitignore. */
export function createListFilesTool(): PencilTool<ListFilesInput> {
  return {
    name: "list_files",
    description:
      "List files and directories under a directory, recursively, in tree order (directories end with `/`, symbolic links with `@` and are not followed). " +
      "Skips .git and whatever .gitignore ignores; includes files staged in this session. Use `pattern` (a glob) to find files by name.",
    inputSchema,
    claims: (input) => [{ path: input.path ?? ".", access: "read" }],
    execute: async (input, ctx) => listFiles(input, ctx),
  };
}

function listFiles(input: ListFilesInput, ctx: ToolContext): string {
  const root = resolveInWorkspace(ctx.ws, input.path ?? ".").real;
  const shown = displayPath(ctx.ws, root);
  const st = ctx.fs.stat(root);
  if (!st) throw new ToolError(`${shown} does not exist. List the workspace root (leave path out) to see what is there.`);
  if (st.kind !== "dir") throw new ToolError(`${shown} is a file, not a directory. Use read_file to read it, or list its directory.`);
  if (!ctx.visible(root) || isSecretName(basename(root))) throw new ToolError(`${shown} may not be listed (the permission rules hide it).`);
  const top = isInside(ctx.ws.root, root) ? ctx.ws.root : root;
  const rules = new WalkRules({ fs: ctx.fs, top, root, visible: (real) => ctx.visible(real) });
  const matches = input.pattern?.trim() ? globTest(input.pattern.trim()) : null;
  const cap = ctx.limits.listMaxEntries;
  const lines: string[] = [];
  let total = 0;
  let links = false;
  walk(
    root,
    rules,
    (e) => {
      if (matches && !matches(e.rel)) return;
      total++;
      if (lines.length < cap) {
        const mark = e.kind === "dir" ? "/" : e.kind === "symlink" ? "@" : "";
        if (e.kind === "symlink") links = true;
        lines.push(displayPath(ctx.ws, e.real) + mark);
      }
      return total < COUNT_CEILING;
    },
    ctx.signal,
  );
  if (ctx.signal?.aborted) throw new ToolError("The listing was cancelled.");
  const where = root === ctx.ws.root ? "the workspace" : shown;
  if (total === 0) {
    if (!matches) return `(${where} is empty, or everything in it is ignored)`;
    return `No entries under ${where} match ${JSON.stringify(input.pattern)}. A pattern without / matches names at any depth (e.g. "*.ts"); one with / matches paths relative to ${where} (e.g. "src/**/*.ts").`;
  }
  if (links) lines.push("(@ marks a symbolic link: listed, not followed)");
  if (total > lines.length) {
    const count = total >= COUNT_CEILING ? `more than ${fmt(COUNT_CEILING)}` : fmt(total);
    lines.push(`[${fmt(cap)} of ${count} entries shown. Narrow with path (a subdirectory) or pattern (e.g. "*.ts").]`);
  }
  return lines.join("\n");
}

function fmt(n: number): string {
  return n.toLocaleString("en-US");
}
