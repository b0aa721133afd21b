import { join } from "node:path";
import { withTranspilerCache } from "./transpiler-cache.ts";

/** Path of the CLI entry point. */
export const INDEX = join(import.meta.dir, "../../index.ts");

/** A finished CLI process: exit code and what it printed. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Z0-9]|\x1b[=>]/g;

/** The lines a screen shows: a carriage return starts a line over, escape sequences take no room. */
export function screenLines(raw: string): string[] {
  return raw.replace(ANSI, "").split(/\r\n|\n|\r/);
}

/** Drops terminal escape sequences and carriage returns, for matching on what a person would read. */
export function plain(text: string): string {
  return text.replace(ANSI, "").replace(/\r/g, "");
}

/** The command line of `bun index.ts …`, with a test-only preload (e.g. test/fixtures/fault-preload.ts) when given. */
function commandLine(args: string[], preload?: string): string[] {
  return [process.execPath, ...(preload ? ["--preload", preload] : []), INDEX, ...args];
}

/** Runs `bun index.ts …` with no terminal: stdin closed, stdout and stderr piped. */
export async function runCli(
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number; preload?: string },
): Promise<CliResult> {
  const proc = Bun.spawn(commandLine(args, options.preload), {
    cwd: options.cwd,
    env: withTranspilerCache(options.env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), options.timeoutMs ?? 20_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** The session's follow-up prompt (README "Commands"). */
const FOLLOW_UP = "› ";

/** One exchange with a program in a pseudo-terminal: wait until `expect` appears, then type `send`. */
export interface PtyStep {
  expect: RegExp | string;
  send: string;
  /** Run once `expect` has appeared, before `send` is typed (to change the world mid-session). */
  beforeSend?: () => void;
}

/** A program driven through a pseudo-terminal, as a person at a terminal would. */
export async function runCliPty(
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    steps: PtyStep[];
    timeoutMs?: number;
    cols?: number;
    preload?: string;
    onSpawn?: (pid: number) => void;
    endFollowUps?: boolean;
  },
): Promise<{ code: number; output: string; raw: string }> {
  let raw = "";
  let cursor = 0;
  let wake: (() => void) | null = null;
  const decoder = new TextDecoder();
  const proc = Bun.spawn(commandLine(args, options.preload), {
    cwd: options.cwd,
    env: withTranspilerCache(options.env),
    terminal: {
      cols: options.cols ?? 160,
      rows: 50,
      data(_term, data) {
        raw += decoder.decode(data, { stream: true });
        wake?.();
      },
    },
  });
  options.onSpawn?.(proc.pid);
  const deadline = Date.now() + (options.timeoutMs ?? 25_000);
  const waitFor = async (expected: RegExp | string): Promise<void> => {
    for (;;) {
      const text = plain(raw).slice(cursor);
      const index = typeof expected === "string" ? text.indexOf(expected) : text.search(expected);
      if (index !== -1) {
        const matched = typeof expected === "string" ? expected.length : (text.match(expected)?.[0].length ?? 0);
        cursor += index + matched;
        return;
      }
      if (Date.now() > deadline) {
        proc.kill("SIGKILL");
        throw new Error(`Timed out waiting for ${String(expected)}. Screen so far:\n${plain(raw)}`);
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 200);
      });
    }
  };
  try {
    for (const step of options.steps) {
      await waitFor(step.expect);
      step.beforeSend?.();
      proc.terminal!.write(step.send);
    }
    const timer = setTimeout(() => proc.kill("SIGKILL"), Math.max(1000, deadline - Date.now()));
    // A session's `› ` follow-up prompt that the steps did not answer is ended with an empty line, as a person done with it would.
    let exited = false;
    const exitedPromise = proc.exited.then((code) => {
      exited = true;
      return code;
    });
    while (!exited && options.endFollowUps !== false) {
      const rest = plain(raw).slice(cursor);
      const at = rest.indexOf(FOLLOW_UP);
      if (at !== -1) {
        cursor += at + FOLLOW_UP.length;
        proc.terminal!.write("\r");
        continue;
      }
      await Promise.race([exitedPromise, new Promise((resolve) => setTimeout(resolve, 100))]);
    }
    const code = await exitedPromise;
    clearTimeout(timer);
    return { code, output: plain(raw), raw };
  } finally {
    proc.terminal?.close();
  }
}
