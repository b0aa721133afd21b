import { decodeLine } from "./search-text.ts";
import { SECRET_ENV_EXCEPTIONS } from "../../core/policy/walk.ts";

// Locating and running ripgrep, which the search tool uses when present (and the
// JS engine of rust-regex.ts and search-text.ts otherwise): its arguments, and
// its output read back file by file.

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

let detected: string | null | undefined;

/** The rg to run: `explicit` when given (null: none, use the JS search), else the first `rg` on PATH, else null. */
export function findRipgrep(explicit?: string | null): string | null {
  if (explicit !== undefined) return explicit;
  if (detected === undefined) detected = Bun.which("rg") ?? null;
  return detected;
}

/** `--glob` excludes for secret env files: `.env` and `.env.*`, except the SECRET_ENV_EXCEPTIONS (re-including them would switch rg's globs to whitelist mode). */
function secretEnvGlobs(): string[] {
  // A literal trailing dot is lost by rg's glob matcher; the class form keeps it.
  const globs = ["!.env", "!.env[.]"];
  const words = [...SECRET_ENV_EXCEPTIONS];
  const visit = (prefix: string): void => {
    const next = [
      ...new Set(words.filter((w) => w.startsWith(prefix) && w.length > prefix.length).map((w) => w[prefix.length]!)),
    ].sort();
    if (prefix !== "" && !words.includes(prefix)) globs.push(`!.env.${prefix}`);
    globs.push(next.length > 0 ? `!.env.${prefix}[!${next.join("")}]*` : `!.env.${prefix}?*`);
    for (const c of next) visit(prefix + c);
  };
  visit("");
  return globs;
}

/** What one rg run searches. */
export interface RipgrepQuery {
  /** The pattern in Rust syntax (SearchPattern.rust). */
  pattern: string;
  /** Relative path to search from the working directory; null for the working directory itself. */
  target: string | null;
  maxFileBytes: number;
  /** An include glob in rg's syntax (relative to the working directory), or null. */
  glob: string | null;
  /** A gitignore-syntax file of extra rules (those of the target's parent directories), or null. */
  ignoreFile: string | null;
}

/**
 * rg's arguments: only .gitignore files count (no .ignore, .rgignore, global or
 * .git/info/exclude), whether or not there is a git repository; hidden files
 * searched, `.git` and secret env files never opened, links not followed.
 */
export function ripgrepArgs(q: RipgrepQuery): string[] {
  const args = [
    "--no-config",
    "--no-heading",
    "--with-filename",
    "--line-number",
    "--null",
    "--color",
    "never",
    "--no-messages",
    "--hidden",
    "--no-require-git",
    "--no-ignore-dot",
    "--no-ignore-global",
    "--no-ignore-exclude",
    "--no-ignore-parent",
    "--crlf",
    "--max-filesize",
    String(q.maxFileBytes),
  ];
  if (q.glob) args.push("--glob", q.glob);
  // Excludes come after the include: for rg the last matching glob wins.
  args.push("--glob", "!.git");
  // Case-insensitive, like the policy: rg must not even open `.ENV` or `.Env.local`.
  for (const g of secretEnvGlobs()) args.push("--iglob", g);
  if (q.ignoreFile) args.push("--ignore-file", q.ignoreFile);
  args.push("--regexp", q.pattern, "--");
  if (q.target) args.push(q.target);
  return args;
}

/** How an rg run ended. */
export interface RipgrepResult {
  code: number;
  /** The signal that ended rg (SIGSEGV when it crashed, SIGTERM when the search was cancelled), or null when it exited. */
  signal: string | null;
  stderr: string;
}

/** Receives rg's output file by file: the matching lines of one file (path as rg prints it, 1-based numbers, text without terminator). */
export interface RipgrepSink {
  file(path: string, lines: number[], texts: string[]): void;
  /** rg gave up on a file as binary after its lines were already passed on (not expected: rg prints a file's output at once). */
  binary(path: string): void;
}

const BINARY_WARNING = /^(.*): WARNING: stopped searching binary file/;

/** Runs rg in `cwd`, passing each file's lines to `sink` once the file is complete and known not to be binary. */
export async function runRipgrep(
  rg: string,
  args: string[],
  cwd: string,
  sink: RipgrepSink,
  signal?: AbortSignal,
): Promise<RipgrepResult> {
  const proc = Bun.spawn([rg, ...args], { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const abort = () => proc.kill();
  signal?.addEventListener("abort", abort, { once: true });
  const stderr = new Response(proc.stderr).text();
  // rg prints each file's lines together, then a warning if the file turned out binary: hold them until the file ends.
  let path: string | null = null;
  let lines: number[] = [];
  let texts: string[] = [];
  const flush = () => {
    if (path !== null && lines.length > 0) sink.file(stripDot(path), lines, texts);
    path = null;
    lines = [];
    texts = [];
  };
  const handle = (text: string) => {
    let nul: number;
    if (path !== null && text.startsWith(path) && text.charCodeAt(path.length) === 0) {
      nul = path.length;
    } else {
      nul = text.indexOf("\0");
      if (nul === -1) {
        const warn = BINARY_WARNING.exec(text);
        if (!warn) return;
        if (warn[1] === path) {
          lines = [];
          texts = [];
        } else {
          sink.binary(stripDot(warn[1]!));
        }
        return;
      }
      flush();
      path = text.slice(0, nul);
    }
    let n = 0;
    let i = nul + 1;
    for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) n = n * 10 + (c - 48);
    if (text.charCodeAt(i) !== 58) return;
    // With --crlf, rg ends every printed line with the file's own terminator, or CRLF when the file's last line has none.
    const end = text.charCodeAt(text.length - 1) === 13 ? text.length - 1 : text.length;
    lines.push(n);
    texts.push(text.slice(i + 1, end));
  };
  let rest: Uint8Array = new Uint8Array(0);
  try {
    for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      let data = chunk;
      if (rest.length > 0) {
        data = new Uint8Array(rest.length + chunk.length);
        data.set(rest);
        data.set(chunk, rest.length);
      }
      const end = data.lastIndexOf(10);
      if (end === -1) {
        rest = data;
        continue;
      }
      rest = data.slice(end + 1);
      splitLines(data.subarray(0, end), handle);
    }
    if (rest.length > 0) splitLines(rest, handle);
    flush();
    const code = await proc.exited;
    return { code, signal: proc.signalCode === null ? null : String(proc.signalCode), stderr: await stderr };
  } finally {
    signal?.removeEventListener("abort", abort);
  }
}

/** Decodes complete output lines, fast as one block when it is all valid UTF-8, line by line otherwise. */
function splitLines(block: Uint8Array, handle: (line: string) => void): void {
  let text: string | null = null;
  try {
    text = strictUtf8.decode(block);
  } catch {
    // Not valid UTF-8: the block is split with escapes instead below.
    text = null;
  }
  if (text !== null) {
    for (const line of text.split("\n")) handle(line);
    return;
  }
  let start = 0;
  while (start <= block.length) {
    let end = block.indexOf(10, start);
    if (end === -1) end = block.length;
    handle(decodeLine(block.subarray(start, end)));
    start = end + 1;
  }
}

function stripDot(path: string): string {
  return path.startsWith("./") ? path.slice(2) : path;
}

/**
 * Rules of a .gitignore in directory `prefix` (relative to rg's working
 * directory, "" for it) rewritten to apply from the working directory, for
 * `--ignore-file`; null when the prefix holds glob syntax and cannot be written.
 */
export function rebaseIgnore(text: string, prefix: string): string | null {
  if (/[\\*?[\]{}!#]|^\s|\s$/.test(prefix)) return null;
  const base = prefix === "" ? "" : `/${prefix}`;
  const out: string[] = [];
  for (let line of text.split("\n")) {
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim() === "" || line.startsWith("#")) continue;
    const neg = line.startsWith("!");
    let body = neg ? line.slice(1) : line;
    const trimmed = body.replace(/(?<!\\)\s+$/, "").replace(/\/$/, "");
    const anchored = trimmed.includes("/");
    if (body.startsWith("/")) body = body.slice(1);
    const rule = anchored ? `${base}/${body}` : base === "" ? body : `${base}/**/${body}`;
    out.push((neg ? "!" : "") + rule);
  }
  return out.join("\n");
}
