import { createColors } from "picocolors";
import { createInterface } from "node:readline";
import type { Env } from "../../app/runtime.ts";

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
  columns: number;
}

/** The real process terminal. Colour only on a terminal and never with NO_COLOR. */
export function processIO(env: Env): CliIO {
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const color = Boolean(process.stdout.isTTY) && env.NO_COLOR === undefined && env.TERM !== "dumb";
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    interactive,
    color,
    colors: createColors(color),
    prompt: (question) => askLine(question),
    columns: process.stdout.columns ?? 100,
  };
}

/** One line from stdin; null on end of input or Ctrl-C, never a guess. */
function askLine(question: string): Promise<string | null> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: Boolean(process.stdin.isTTY) });
    let settled = false;
    const done = (value: string | null) => {
      if (settled) return;
      settled = true;
      rl.close();
      resolve(value);
    };
    rl.on("SIGINT", () => {
      process.stdout.write("\n");
      done(null);
    });
    rl.on("close", () => done(null));
    rl.question(question, (answer) => done(answer));
  });
}
