import { createColors } from "picocolors";
import { basename, relative } from "node:path";
import { STANDALONE } from "../../core/installation.ts";
import { KeyInput } from "./key-input.ts";
import type { Env } from "../../core/pencil-home.ts";

/** The terminal as a command sees it: where to write, whether a human can answer, and whether to colour. */
export interface CliIO {
  out: (text: string) => void;
  err: (text: string) => void;
  /** True only when both stdin and stdout are terminals: the only case in which anything may be applied. */
  interactive: boolean;
  color: boolean;
  colors: ReturnType<typeof createColors>;
  /** Asks one line; resolves null when input ended (EOF, Ctrl-D) or was interrupted. */
  prompt: (question: string) => Promise<string | null>;
  /**
   * Asks for one key of `keys` (single keypress on a terminal, one per line from a pipe;
   * Enter alone does nothing). Resolves the lower-cased key, or the whole word when more
   * than one character was typed, or null when input ended or Ctrl-C was pressed.
   */
  key: (question: string, keys: string) => Promise<string | null>;
  columns: number;
  /** `--verbose`: command output in full instead of its first and last lines. */
  verbose?: boolean;
  /** How the person started Pencil (`pencil`, `./bin/pencil`, `bun index.ts`): hints print commands that way. */
  invocation?: string;
  /** `--json`: stdout carries exactly one JSON document; progress and messages go to stderr, and nothing is asked. */
  machine?: boolean;
}

/** The terminal for a `--json` run: progress to stderr, no questions (each is answered no), stdout left for the document. */
export function machineIO(io: CliIO): CliIO {
  return { ...io, machine: true, interactive: false };
}

/** The real process terminal. Colour only on a terminal and never with NO_COLOR. */
export function processIO(env: Env): CliIO {
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const color = Boolean(process.stdout.isTTY) && env.NO_COLOR === undefined && env.TERM !== "dumb";
  quietOnClosedPipe();
  return {
    out: (text) => guarded(() => process.stdout.write(text)),
    err: (text) => guarded(() => process.stderr.write(text)),
    interactive,
    color,
    colors: createColors(color),
    prompt: (question) => keyInput().line(question),
    key: (question, keys) => keyInput().key(question, keys),
    columns: process.stdout.columns ?? 100,
    invocation: invocationOf(env),
  };
}

/** A command to suggest, spelled the way this Pencil was started: `hint(io, "review ID")`. */
export function hint(io: CliIO, rest: string): string {
  return `${io.invocation ?? "pencil"} ${rest}`;
}

/**
 * How the person started this process, so that a suggested command works when pasted:
 * the launcher passes its $0 (`pencil` when found on PATH, else the path as typed);
 * `npm run` starts in Pencil's directory, where `./bin/pencil` works; else `bun <index>`.
 */
function invocationOf(env: Env, argv1: string = process.argv[1] ?? "index.ts", cwd: string = process.cwd()): string {
  // The single executable has no launcher: its name when PATH finds it there, else its path.
  if (STANDALONE)
    return Bun.which(basename(process.execPath)) === process.execPath
      ? basename(process.execPath)
      : quoteIfNeeded(process.execPath);
  const launcher = env.PENCIL_INVOKED_AS;
  if (launcher) return launcher === "pencil" ? "pencil" : quoteIfNeeded(launcher);
  if (env.npm_lifecycle_event) return "./bin/pencil";
  const rel = relative(cwd, argv1);
  return `bun ${quoteIfNeeded(rel && !rel.startsWith("..") ? rel : argv1)}`;
}

function quoteIfNeeded(word: string): string {
  return /^[\w./@%+=:,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

let input: KeyInput | null = null;
/** One reader for the whole process, so piped answers are never lost between questions (a terminal's type-ahead is dropped: see KeyInput). */
function keyInput(): KeyInput {
  if (!input) {
    input = new KeyInput(process.stdin, (text) => guarded(() => process.stdout.write(text)));
    // However the process ends (a closed pipe, process.exit), the terminal is not left in raw mode.
    process.on("exit", () => {
      if (process.stdin.isTTY) process.stdin.setRawMode?.(false);
    });
  }
  return input;
}

/** True for the error a write gets when the reader went away (`pencil log | head`). */
function isClosedPipe(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "EPIPE";
}

/** A reader that stopped reading is not a failure: the command ends quietly, exit 0. */
function guarded(write: () => unknown): void {
  try {
    write();
  } catch (error) {
    if (isClosedPipe(error)) process.exit(0);
    throw error;
  }
}

let pipesGuarded = false;
function quietOnClosedPipe(): void {
  if (pipesGuarded) return;
  pipesGuarded = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error) => {
      if (isClosedPipe(error)) process.exit(0);
      throw error;
    });
  }
}
