import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative, sep } from "node:path";
import { z } from "zod";
import { findRipgrep, rebaseIgnore, ripgrepArgs, runRipgrep } from "./search/ripgrep.ts";
import { compilePattern, escapeRegex, quote, type SearchPattern } from "./search/rust-regex.ts";
import { missingPathMessage } from "./path-near-miss.ts";
import { identifiersOf, relaxationsOf } from "./search/search-relax.ts";
import { decodeForSearch, displayLine } from "./search/search-text.ts";
import { comparePaths, globTest, isSecretName, StagedIndex, walk, WalkRules } from "../core/policy/walk.ts";
import { displayPath, isInside, resolveInWorkspace } from "../core/workspace.ts";
import { cutLine } from "./read-file.ts";
import type { PencilTool, ToolContext } from "./tool.ts";
import { PatternError } from "../core/errors/pattern-error.ts";
import { ToolError } from "../core/errors/tool-error.ts";

const inputSchema = z.object({
  pattern: z
    .string()
    .describe(
      "Regular expression in ripgrep (Rust) syntax, matched against each line. Escape regex characters to match them literally, e.g. `foo\\(`; start with (?i) to ignore case.",
    ),
  path: z
    .string()
    .optional()
    .describe("File or directory to search, relative to the workspace root. Default: the whole workspace."),
  glob: z
    .string()
    .optional()
    .describe(
      "Only search files matching this glob: `*.ts` matches at any depth, `src/**/*.test.ts` is relative to `path`.",
    ),
});

// Lines shown per near miss when nothing matched the pattern itself.
const NEAR_MISS_EXAMPLES = 5;
// A search pattern longer than this is refused with a clear answer (no one greps for a page of text).
const MAX_PATTERN_CHARS = 4096;

/** Input of the `search` tool. */
export type SearchInput = z.infer<typeof inputSchema>;

/** What the search tool is built with: `rgPath` null forces the JS search, a string names the rg binary, undefined finds rg on PATH. */
export interface SearchDeps {
  rgPath?: string | null;
}

/** One matching line, as shown. */
interface SearchHit {
  /** Display path (workspace-relative, or absolute outside it). */
  path: string;
  line: number;
  text: string;
}

/** The first hits in path then line order, and how many lines matched in all. */
interface SearchResult {
  hits: SearchHit[];
  total: number;
  /** Set when ripgrep was there but failed, so the JavaScript engine answered instead: what went wrong, for the model to read. */
  ripgrepFailure?: string;
}

/** A search over a directory tree, given everything the tool resolved. */
interface TreeSearch {
  ctx: ToolContext;
  pattern: SearchPattern;
  /** Real path of the directory searched. */
  root: string;
  glob: string | null;
  /** Hits kept (the rest are only counted). */
  max: number;
  /** rg to use, or null for the JS search. */
  rg: string | null;
}

/** Creates the `search` tool: regex search over file contents, with rg when present and the same results without it. */
export function createSearchTool(deps: SearchDeps = {}): PencilTool<SearchInput> {
  return {
    name: "search",
    description:
      "Search file contents with a regular expression (ripgrep syntax), line by line. Returns `path:line:text` for each matching line, sorted by path then line. " +
      "Respects .gitignore, searches hidden files, skips binary files and files over the size limit. Use `glob` to restrict file names and `path` to a directory.",
    inputSchema,
    claims: (input) => [{ path: input.path ?? ".", access: "read" }],
    execute: (input, ctx) => executeSearch(input, ctx, findRipgrep(deps.rgPath)),
  };
}

async function executeSearch(input: SearchInput, ctx: ToolContext, rg: string | null): Promise<string> {
  if (input.pattern.length > MAX_PATTERN_CHARS) {
    throw new ToolError(
      `The pattern is ${fmt(input.pattern.length)} characters, over the ${fmt(MAX_PATTERN_CHARS)}-character limit. Search for a short distinctive part of the text (one line, or an identifier).`,
    );
  }
  const pattern = compileOrExplain(input.pattern);
  const resolved = resolveInWorkspace(ctx.ws, input.path ?? ".");
  const root = resolved.real;
  const shown = displayPath(ctx.ws, root);
  const st = ctx.fs.stat(root);
  if (!st)
    throw new ToolError(
      missingPathMessage(
        ctx,
        root,
        shown,
        "Search the whole workspace (leave path out), or use list_files to find the directory.",
      ),
    );
  if (!ctx.visible(root) || isSecretName(basename(root)))
    throw new ToolError(`${shown} may not be searched (the permission rules hide it).`);
  const glob = input.glob?.trim() ? input.glob.trim() : null;
  const max = ctx.limits.searchMaxMatches;
  let result: SearchResult;
  if (st.kind === "file") {
    result = searchOneFile(ctx, pattern, root, max);
  } else if (st.kind === "dir") {
    result = await searchTree({ ctx, pattern, root, glob, max, rg });
  } else {
    throw new ToolError(`${shown} is not a regular file or directory; give a file or a directory to search.`);
  }
  if (ctx.signal?.aborted) throw new ToolError("The search was cancelled.");
  const scope = `${root === ctx.ws.root ? "the workspace" : shown}${glob ? ` (glob ${glob})` : ""}`;
  const note = result.ripgrepFailure
    ? `\n[${result.ripgrepFailure}; the built-in search answered instead, by the same rules. Say so to the owner: ripgrep may need reinstalling.]`
    : "";
  if (result.total === 0)
    return (
      (await noMatches(input.pattern, scope, (p) =>
        // A ripgrep that failed once is not started again for each retry: the built-in engine answers them.
        retry(p, { ctx, pattern, root, glob, max: 3, rg: result.ripgrepFailure ? null : rg }, st.kind === "file"),
      )) + note
    );
  const lines = result.hits.map((h) => `${h.path}:${h.line}:${h.text}`);
  if (result.total > result.hits.length) {
    const more = result.total - result.hits.length;
    lines.push(
      `[${fmt(result.hits.length)} of ${fmt(result.total)} matching lines shown; ${fmt(more)} more. Narrow the search with path, glob or a more specific pattern.]`,
    );
  }
  return lines.join("\n") + note;
}

/** The first few lines of rg's error output, for the note (a crash can print pages). */
function firstLines(text: string): string {
  const lines = text.trim().split("\n");
  return lines.length > 3 ? `${lines.slice(0, 3).join(" ")} …` : lines.join(" ");
}

function compileOrExplain(source: string): SearchPattern {
  try {
    return compilePattern(source);
  } catch (error) {
    if (!PatternError.isInstance(error)) throw error;
    const literal = escapeRegex(source);
    const hint = literal !== source ? ` To search for the text literally, escape it: ${literal}` : "";
    throw new ToolError(error.message + hint);
  }
}

async function retry(source: string, base: TreeSearch, oneFile: boolean): Promise<SearchResult | null> {
  let pattern: SearchPattern;
  try {
    pattern = compilePattern(source);
  } catch {
    // Not a pattern: null, and the caller searches the text literally and says so.
    return null;
  }
  return oneFile ? searchOneFile(base.ctx, pattern, base.root, base.max) : searchTree({ ...base, pattern });
}

/** The "nothing found" answer: near misses (case, spacing, numbers, literal text, identifiers alone) when one of them matches. */
async function noMatches(
  source: string,
  scope: string,
  run: (pattern: string) => Promise<SearchResult | null>,
): Promise<string> {
  const head = `No matches for ${quote(source)} in ${scope}.`;
  const examples = (found: SearchResult) =>
    found.hits.slice(0, NEAR_MISS_EXAMPLES).map((h) => `  ${h.path}:${h.line}: ${h.text.trim()}`);
  for (const v of relaxationsOf(source)) {
    const found = await run(v.pattern);
    if (!found || found.total === 0) continue;
    return [
      `${head} ${v.how}, it matches ${fmt(found.total)} line${found.total === 1 ? "" : "s"}, e.g.:`,
      ...examples(found),
      `Search again with pattern ${JSON.stringify(v.pattern)} to see them all, or read_file around these lines.`,
    ].join("\n");
  }
  const alone: string[] = [];
  for (const id of identifiersOf(source)) {
    const found = await run(`\\b${escapeRegex(id)}\\b`);
    if (!found || found.total === 0) continue;
    alone.push(
      `Identifier ${id} alone matches ${fmt(found.total)} line${found.total === 1 ? "" : "s"}, e.g.:`,
      ...examples(found),
    );
    if (alone.length > 8) break;
  }
  if (alone.length > 0) return [head, ...alone, "read_file around these lines to see the exact text."].join("\n");
  return `${head} Check the spelling, search for a shorter part of it, or widen path or glob.`;
}

/** Searches one file the path named directly (no .gitignore or glob applies to it). */
function searchOneFile(ctx: ToolContext, pattern: SearchPattern, real: string, max: number): SearchResult {
  const shown = displayPath(ctx.ws, real);
  const st = ctx.fs.stat(real)!;
  if (st.size > ctx.limits.maxFileBytes) {
    throw new ToolError(
      `${shown} is ${fmt(st.size)} bytes, over the ${fmt(ctx.limits.maxFileBytes)}-byte search limit; read parts of it with read_file offset and limit.`,
    );
  }
  const text = decodeForSearch(ctx.fs.readBytes(real));
  if (text === null) throw new ToolError(`${shown} is a binary file; search only looks in text files.`);
  const hits = new Collector(max, ctx.limits.maxLineChars);
  searchText(text, pattern, (line, body) => hits.add(shown, line, body));
  return hits.result();
}

/** Searches a directory tree: with rg when given one (and nothing staged changes the ignore rules), else in JS. Same results either way. */
async function searchTree(q: TreeSearch): Promise<SearchResult> {
  const { ctx, root } = q;
  const top = isInside(ctx.ws.root, root) ? ctx.ws.root : root;
  const staged = StagedIndex.of(ctx.fs);
  const rules = new WalkRules({ fs: ctx.fs, top, root, visible: (real) => ctx.visible(real), staged });
  // rg reads the .gitignore files on disk; a staged one would make it judge by stale rules.
  const stagedIgnore = [...staged.paths.keys()].some((p) => basename(p) === ".gitignore" && isInside(top, p));
  if (q.rg && !stagedIgnore) {
    const viaRg = await searchWithRipgrep(q, q.rg, rules, top);
    if ("hits" in viaRg) return viaRg;
    const js = searchWithJs(q, rules);
    // Only a missing rg falls back silently; any other failure is said, so a broken rg never hides behind the JS engine.
    return viaRg.failed === null ? js : { ...js, ripgrepFailure: viaRg.failed };
  }
  return searchWithJs(q, rules);
}

function searchWithJs(q: TreeSearch, rules: WalkRules): SearchResult {
  const { ctx, pattern, root } = q;
  const hits = new Collector(q.max, ctx.limits.maxLineChars);
  const globOk = q.glob ? globTest(q.glob) : null;
  walk(
    root,
    rules,
    (entry) => {
      if (entry.kind !== "file") return;
      if (globOk && !globOk(entry.rel)) return;
      searchStoredFile(ctx, pattern, entry.real, hits);
    },
    ctx.signal,
  );
  return hits.result();
}

/** Searches one walked file through ctx.fs, skipping what rg skips: too large, unreadable, binary. */
function searchStoredFile(ctx: ToolContext, pattern: SearchPattern, real: string, hits: Collector): void {
  const st = ctx.fs.stat(real);
  if (!st || st.kind !== "file" || st.size > ctx.limits.maxFileBytes) return;
  let bytes: Uint8Array;
  try {
    bytes = ctx.fs.readBytes(real);
  } catch {
    // Gone or unreadable since it was listed: no match in it.
    return;
  }
  const text = decodeForSearch(bytes);
  if (text === null) return;
  const shown = displayPath(ctx.ws, real);
  searchText(text, pattern, (line, body) => hits.add(shown, line, body));
}

function searchText(text: string, pattern: SearchPattern, onHit: (line: number, text: string) => void): void {
  // An empty file has no lines at all, not one empty line.
  if (text === "" || !pattern.text.test(text)) return;
  const lines = text.split("\n");
  // A final newline ends the last line; it does not start an empty one.
  const count = lines.length > 1 && lines[lines.length - 1] === "" ? lines.length - 1 : lines.length;
  for (let i = 0; i < count; i++) {
    let line = lines[i]!;
    // CRLF ends a line; a CR before the end of the file is the line's own text (as rg --crlf sees it).
    if (i < lines.length - 1 && line.endsWith("\r")) line = line.slice(0, -1);
    if (pattern.line.test(line)) onHit(i + 1, shownLine(line));
  }
}

/**
 * rg finds candidate lines fast; each is then held to the JS rules (ignore
 * files, policy visibility, glob, the JS regex), so rg can only ever make the
 * search faster, never different. Staged files are searched in the overlay.
 * `failed` when rg did not give a whole answer, so the caller searches in JS: null when rg is not
 * installed (nothing to report), else what went wrong.
 */
async function searchWithRipgrep(
  q: TreeSearch,
  rg: string,
  rules: WalkRules,
  top: string,
): Promise<SearchResult | { failed: string | null }> {
  const { ctx, pattern, root } = q;
  const cwd = root === top || !isInside(top, root) ? root : top;
  const target = cwd === root ? null : posix(relative(cwd, root));
  const globOk = q.glob ? globTest(q.glob) : null;
  let tmp: string | null = null;
  try {
    let ignoreFile: string | null = null;
    if (target !== null) {
      const parts = rules.ancestorIgnores(root).map((a) => rebaseIgnore(a.text, posix(relative(cwd, a.dir))));
      if (parts.length > 0 && parts.every((p) => p !== null)) {
        tmp = mkdtempSync(join(tmpdir(), "pencil-rg-"));
        ignoreFile = join(tmp, "ignore");
        writeFileSync(ignoreFile, parts.join("\n") + "\n");
      }
    }
    const args = ripgrepArgs({
      pattern: pattern.rust,
      target,
      maxFileBytes: ctx.limits.maxFileBytes,
      glob: q.glob ? ripgrepGlob(q.glob, target) : null,
      ignoreFile,
    });
    const hits = new Collector(q.max, ctx.limits.maxLineChars);
    const staged = rules.staged;
    const run = await runRipgrep(
      rg,
      args,
      cwd,
      {
        file(path, lines, texts) {
          const real = join(cwd, path);
          if (staged.paths.has(real) || !rules.admitsPath(real, "file", root)) return;
          if (globOk && !globOk(posix(relative(root, real)))) return;
          const shown = displayPath(ctx.ws, real);
          const room = hits.room(shown);
          const kept: SearchHit[] = [];
          let count = 0;
          for (let i = 0; i < texts.length; i++) {
            const text = texts[i]!;
            if (!pattern.line.test(text)) continue;
            count++;
            if (kept.length < room) kept.push({ path: shown, line: lines[i]!, text: shownLine(text) });
          }
          hits.addFile(shown, count, kept);
        },
        binary(path) {
          hits.drop(displayPath(ctx.ws, join(cwd, path)));
        },
      },
      ctx.signal,
    );
    if (run.signal !== null && !ctx.signal?.aborted) return { failed: `ripgrep (${rg}) was killed by ${run.signal}` };
    if (run.code > 1) {
      if (/regex|pattern/i.test(run.stderr))
        throw new ToolError(`ripgrep rejected the pattern ${quote(pattern.source)}: ${run.stderr.trim()}`);
      // Exit 2 with nothing said is rg's "some files could not be read" (its messages are off): those are
      // skipped, as the JS engine skips them. Anything it says is a failure of rg itself.
      if (run.stderr.trim() !== "")
        return { failed: `ripgrep (${rg}) failed with exit code ${run.code}: ${firstLines(run.stderr)}` };
    }
    for (const [real, deleted] of staged.paths) {
      if (deleted || !isInside(root, real) || real === root) continue;
      if (!rules.admitsPath(real, "file", root)) continue;
      if (globOk && !globOk(posix(relative(root, real)))) continue;
      searchStoredFile(ctx, pattern, real, hits);
    }
    return hits.result();
  } catch (error) {
    if (ToolError.isInstance(error)) throw error;
    // rg gone since it was found on PATH: not installed, the one failure that is not reported.
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && !existsSync(rg)) return { failed: null };
    return { failed: `ripgrep (${rg}) could not be run: ${(error as Error).message}` };
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

/** The user's glob for rg's --glob, when it surely selects no fewer files than globTest does; else null (the JS check alone filters). */
function ripgrepGlob(glob: string, target: string | null): string | null {
  const g = glob.replace(/^\.\//, "").replace(/^\/+/, "");
  if (!/^[A-Za-z0-9_.\-/*]+(\{[A-Za-z0-9_.\-*,]+\}[A-Za-z0-9_.\-/*]*)?$/.test(g) || g.includes("..")) return null;
  if (!g.includes("/")) return g;
  if (target !== null && /[\\*?[\]{}!]/.test(target)) return null;
  return target === null ? g : `${target}/${g}`;
}

/** Keeps the first hits in path then line order and counts all of them, in memory bounded by the cap. */
class Collector {
  private readonly files = new Map<string, { count: number; hits: SearchHit[] }>();
  private stored = 0;
  // Paths after this one can no longer make the cut: they are only counted.
  private limit: string | null = null;

  constructor(
    private readonly max: number,
    private readonly maxLineChars: number,
  ) {}

  add(path: string, line: number, text: string): void {
    this.addFile(path, 1, this.room(path) > 0 ? [{ path, line, text }] : []);
  }

  /** How many more hits of `path` could still be shown (0 once the path can no longer make the cut). */
  room(path: string): number {
    if (this.limit !== null && comparePaths(path, this.limit) > 0) return 0;
    return this.max - (this.files.get(path)?.hits.length ?? 0);
  }

  /** Counts `count` matching lines of `path` and keeps `hits` (at most `room(path)` of them, in line order). */
  addFile(path: string, count: number, hits: SearchHit[]): void {
    if (count === 0) return;
    let file = this.files.get(path);
    if (!file) this.files.set(path, (file = { count: 0, hits: [] }));
    file.count += count;
    for (const h of hits) file.hits.push({ path, line: h.line, text: cutLine(h.text, this.maxLineChars) });
    this.stored += hits.length;
    if (this.stored > 4 * this.max) this.prune();
  }

  /** Forgets a file's hits (rg found it binary after all). */
  drop(path: string): void {
    const file = this.files.get(path);
    if (!file) return;
    this.stored -= file.hits.length;
    this.files.delete(path);
  }

  result(): SearchResult {
    let total = 0;
    for (const f of this.files.values()) total += f.count;
    const paths = [...this.files.keys()].sort(comparePaths);
    const hits: SearchHit[] = [];
    for (const p of paths) {
      if (hits.length >= this.max) break;
      const own = this.files.get(p)!.hits.sort((a, b) => a.line - b.line);
      hits.push(...own.slice(0, this.max - hits.length));
    }
    return { hits, total };
  }

  private prune(): void {
    const paths = [...this.files.keys()].sort(comparePaths);
    let kept = 0;
    for (const p of paths) {
      const file = this.files.get(p)!;
      if (kept >= this.max) {
        this.stored -= file.hits.length;
        file.hits = [];
        continue;
      }
      kept += file.hits.length;
      if (kept >= this.max) this.limit = p;
    }
  }
}

/** A matched line as shown: trailing carriage returns dropped, invalid bytes as U+FFFD. */
function shownLine(line: string): string {
  return displayLine(line.endsWith("\r") ? line.replace(/\r+$/, "") : line);
}

function posix(p: string): string {
  return sep === "/" ? p : p.split(sep).join("/");
}

function fmt(n: number): string {
  return n.toLocaleString("en-US");
}
