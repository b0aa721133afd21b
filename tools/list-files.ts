import { basename } from "node:path";
import picomatch from "picomatch";
import { z } from "zod";
import { editDistance, missingPathMessage } from "./path-near-miss.ts";
import { globTest, isSecretName, walk, WalkRules } from "../core/policy/walk.ts";
import { displayPath, isInside, resolveInWorkspace } from "../core/workspace.ts";
import type { PencilTool, ToolContext } from "./tool.ts";
import { ToolError } from "../core/errors/tool-error.ts";

const inputSchema = z.object({
  path: z
    .string()
    .optional()
    .describe("Directory to list, relative to the workspace root. Default: the workspace root."),
  pattern: z
    .string()
    .optional()
    .describe(
      "Only entries matching this glob: `*.ts` matches names at any depth, `src/**/*.ts` is relative to `path`.",
    ),
});

/** Input of the `list_files` tool. */
export type ListFilesInput = z.infer<typeof inputSchema>;

// Entries looked at for a pattern's near misses.
const NEAR_MISS_BUDGET = 20_000;

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
  if (!st)
    throw new ToolError(
      missingPathMessage(ctx, root, shown, "List the workspace root (leave path out) to see what is there."),
    );
  if (st.kind !== "dir")
    throw new ToolError(`${shown} is a file, not a directory. Use read_file to read it, or list its directory.`);
  if (!ctx.visible(root) || isSecretName(basename(root)))
    throw new ToolError(`${shown} may not be listed (the permission rules hide it).`);
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
    const near = patternNearMisses(
      input.pattern!.trim(),
      root,
      new WalkRules({ fs: ctx.fs, top, root, visible: (real) => ctx.visible(real) }),
      ctx,
    );
    if (near) return `No entries under ${where} match ${JSON.stringify(input.pattern)}. ${near}`;
    return `No entries under ${where} match ${JSON.stringify(input.pattern)}. A pattern without / matches names at any depth (e.g. "*.ts"); one with / matches paths relative to ${where} (e.g. "src/**/*.ts").`;
  }
  if (links) lines.push("(@ marks a symbolic link: listed, not followed)");
  if (total > lines.length) {
    const count = total >= COUNT_CEILING ? `more than ${fmt(COUNT_CEILING)}` : fmt(total);
    lines.push(`[${fmt(cap)} of ${count} entries shown. Narrow with path (a subdirectory) or pattern (e.g. "*.ts").]`);
  }
  return lines.join("\n");
}

/** What a pattern that matched nothing would have matched relaxed: ignoring case, by name at any depth, or a name a typo away. */
function patternNearMisses(pattern: string, root: string, rules: WalkRules, ctx: ToolContext): string | null {
  const body = pattern.replace(/^\.\//, "").replace(/^\/+/, "");
  const name = body.slice(body.lastIndexOf("/") + 1);
  const tries: { how: string; test: (rel: string) => boolean }[] = [];
  const nocase = picomatch(body, { dot: true, nocase: true });
  tries.push({
    how: "Ignoring case",
    test: body.includes("/") ? (rel) => nocase(rel) : (rel) => nocase(rel.slice(rel.lastIndexOf("/") + 1)),
  });
  if (body.includes("/") && name !== "") {
    const byName = picomatch(name, { dot: true, nocase: true });
    tries.push({
      how: `By name alone (${name}) at any depth`,
      test: (rel) => byName(rel.slice(rel.lastIndexOf("/") + 1)),
    });
  }
  if (!/[*?[\]{}!]/.test(name) && name.length >= 3) {
    const limit = Math.max(1, Math.min(3, Math.floor(name.length / 4)));
    tries.push({
      how: `Names close to ${name}`,
      test: (rel) =>
        editDistance(name.toLowerCase(), rel.slice(rel.lastIndexOf("/") + 1).toLowerCase(), limit) !== null,
    });
  }
  const rels: { rel: string; real: string }[] = [];
  let budget = NEAR_MISS_BUDGET;
  walk(
    root,
    rules,
    (e) => {
      if (e.kind !== "symlink" && !isSecretName(e.name)) rels.push({ rel: e.rel, real: e.real });
      return --budget > 0;
    },
    ctx.signal,
  );
  for (const t of tries) {
    const hits = rels.filter((r) => t.test(r.rel));
    if (hits.length === 0) continue;
    const shown = hits.slice(0, 10).map((h) => displayPath(ctx.ws, h.real));
    return `${t.how}, these exist: ${shown.join(", ")}${hits.length > 10 ? `, … ${fmt(hits.length - 10)} more` : ""}.`;
  }
  return null;
}

function fmt(n: number): string {
  return n.toLocaleString("en-US");
}
