import { EventEmitter } from "node:events";
import { createColors } from "picocolors";
import type { CliIO } from "../../modes/cli/io.ts";
import { KeyInput, type KeySource } from "../../modes/cli/key-input.ts";

/** An input that delivers each chunk when the reader is waiting, like keys pressed (or lines piped) one at a time. */
class ScriptedInput extends EventEmitter implements KeySource {
  private flowing = false;
  constructor(
    private readonly chunks: string[],
    readonly isTTY: boolean,
  ) {
    super();
  }
  setRawMode(): void {}
  setEncoding(): void {}
  resume(): void {
    if (this.flowing) return;
    this.flowing = true;
    const tick = () => {
      if (!this.flowing) return;
      const chunk = this.chunks.shift();
      if (chunk === undefined) return void this.emit("end");
      this.emit("data", chunk);
      setTimeout(tick, 1);
    };
    setTimeout(tick, 1);
  }
  pause(): void {
    this.flowing = false;
  }
}

/**
 * A terminal whose keys come from a list (each entry one chunk: a keypress, or a line
 * when `tty` is false) and whose screen is a string, read through the real KeyInput.
 */
export function scriptedTerminal(chunks: string[], options: { tty?: boolean; columns?: number } = {}) {
  let screen = "";
  const write = (t: string) => void (screen += t);
  const input = new KeyInput(new ScriptedInput(chunks, options.tty ?? true), write, 0);
  const io: CliIO = {
    out: write,
    err: write,
    interactive: true,
    color: false,
    colors: createColors(false),
    columns: options.columns ?? 100,
    prompt: (q) => input.line(q),
    key: (q, keys) => input.key(q, keys),
  };
  return { io, screen: () => screen };
}
