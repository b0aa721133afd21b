/** Where keys come from and where their echo goes: process.stdin/stdout, or a fake in tests. */
export interface KeySource {
  isTTY?: boolean;
  setRawMode?: (mode: boolean) => unknown;
  setEncoding?: (encoding: BufferEncoding) => unknown;
  on(event: "data", listener: (chunk: string | Buffer) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  off(event: "data", listener: (chunk: string | Buffer) => void): unknown;
  off(event: "end", listener: () => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

const CTRL_C = "\x03";
const CTRL_D = "\x04";
const CTRL_U = "\x15";
const ESC = "\x1b";
const isEnter = (ch: string) => ch === "\r" || ch === "\n";
/** How long a terminal question waits, before it shows, for keys typed earlier to arrive so they can be dropped. */
const TYPE_AHEAD_SETTLE_MS = 50;

/**
 * Keys and lines from one input, read the same way whether a person presses keys in a
 * terminal (raw mode: one keypress acts, no Enter needed) or a script pipes them one
 * per line. A lone Enter never answers anything. Characters that arrive together with
 * a key (a pasted or piped word) make a word, never a run of keys: "sure" is one
 * answer, not s-u-r-e. On a terminal, keys typed before a key question shows (during
 * the run, or while the next diff was printed) are dropped: an answer counts only
 * when given after the person could see what it answers. Piped input is kept.
 */
export class KeyInput {
  private buffer = "";
  private ended = false;
  private wake: (() => void) | null = null;
  private readonly tty: boolean;

  constructor(
    private readonly input: KeySource,
    private readonly echo: (text: string) => void,
    /** Milliseconds a terminal question waits for earlier keys to arrive before dropping them (0: keep them, for scripted terminals). */
    private readonly settleMs = TYPE_AHEAD_SETTLE_MS,
  ) {
    this.tty = Boolean(input.isTTY);
  }

  private readonly onData = (chunk: string | Buffer): void => {
    this.buffer += typeof chunk === "string" ? chunk : chunk.toString("utf8");
    this.wake?.();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    this.wake?.();
  };

  /**
   * One answer at a key prompt: a single key from `keys` (lower-cased) when it came
   * alone, else the whole word typed or piped with it (the rest of its line, edited
   * and echoed). Enter alone is skipped unless `keys` holds "\n" (then it answers
   * "\n", a default). Null when input ended or the person pressed Ctrl-C / Ctrl-D.
   */
  async key(question: string, keys: string): Promise<string | null> {
    return this.reading(question, true, async () => {
      for (;;) {
        const ch = await this.next();
        if (ch === CTRL_C) return this.done(interrupted());
        if (ch === null || ch === CTRL_D) return this.done(null);
        if (isEnter(ch)) {
          // An Enter alone does nothing, unless the question takes it ("\n" among the keys) as its default.
          if (!keys.includes("\n")) continue;
          if (ch === "\r" && this.buffer[0] === "\n") this.buffer = this.buffer.slice(1);
          return this.done("\n");
        }
        if (ch === ESC) {
          this.dropEscape();
          continue;
        }
        if (ch < " " || ch === "\x7f") continue;
        const lower = ch.toLowerCase();
        const alone = this.buffer === "" || isEnter(this.buffer[0]!);
        if (alone && keys.includes(lower)) {
          this.skipLineEnd();
          if (this.tty) this.echo(ch);
          return this.done(lower);
        }
        // Not a key on its own: the start of a word; the rest of its line completes it.
        if (this.tty) this.echo(ch);
        const word = await this.lineFrom(ch);
        if (word === null) return null;
        if (word.trim() !== "") return word.trim();
        this.echo(question);
      }
    });
  }

  /** One line of text (raw-mode editing on a terminal: Backspace, Ctrl-U); null on end of input or Ctrl-C. */
  async line(question: string): Promise<string | null> {
    // A line decides nothing on its own, and what is typed on at once after `r` is meant for it.
    return this.reading(question, false, () => this.lineFrom(""));
  }

  private async lineFrom(start: string): Promise<string | null> {
    let text = start;
    for (;;) {
      const ch = await this.next();
      if (ch === null) return this.done(this.tty || text === "" ? null : text);
      if (ch === CTRL_C) return this.done(interrupted());
      if (ch === CTRL_D) {
        if (text === "") return this.done(null);
        continue;
      }
      if (isEnter(ch)) {
        if (ch === "\r" && this.buffer[0] === "\n") this.buffer = this.buffer.slice(1);
        return this.done(text);
      }
      if (ch === "\x7f" || ch === "\b") {
        if (text) {
          text = text.slice(0, -1);
          if (this.tty) this.echo("\b \b");
        }
        continue;
      }
      if (ch === CTRL_U) {
        if (this.tty && text) this.echo("\b \b".repeat(text.length));
        text = "";
        continue;
      }
      if (ch === ESC) {
        this.dropEscape();
        continue;
      }
      if (ch < " ") continue;
      text += ch;
      if (this.tty) this.echo(ch);
    }
  }

  private done<T extends string | null>(value: T): T {
    if (this.tty) this.echo("\n");
    return value;
  }

  /**
   * Listens only while a question waits, so Ctrl-C between questions still stops a run
   * (SIGINT). Raw mode is on before the question shows: a key pressed the moment it
   * appears is never echoed or held back by the terminal's line mode.
   */
  private async reading<T>(question: string, dropTypeAhead: boolean, body: () => Promise<T>): Promise<T> {
    this.input.setEncoding?.("utf8");
    if (this.tty) this.input.setRawMode?.(true);
    this.input.on("data", this.onData);
    this.input.on("end", this.onEnd);
    this.input.resume();
    try {
      if (dropTypeAhead && this.tty && this.settleMs > 0) {
        // Keys the terminal held while no question was shown arrive as soon as we read: drop them before the question shows.
        await new Promise((resolve) => setTimeout(resolve, this.settleMs));
        this.buffer = "";
      }
      this.echo(question);
      return await body();
    } finally {
      this.input.off("data", this.onData);
      this.input.off("end", this.onEnd);
      if (this.tty) this.input.setRawMode?.(false);
      this.input.pause();
    }
  }

  private async next(): Promise<string | null> {
    while (this.buffer === "") {
      if (this.ended) return null;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
    const [ch] = this.buffer; // a whole code point, not half a surrogate pair
    this.buffer = this.buffer.slice(ch!.length);
    return ch!;
  }

  /** The line end that came with a key (scripts send "y\n") belongs to it. */
  private skipLineEnd(): void {
    if (this.buffer.startsWith("\r\n")) this.buffer = this.buffer.slice(2);
    else if (isEnter(this.buffer[0] ?? "")) this.buffer = this.buffer.slice(1);
  }

  /** Arrow keys and the like: ESC [ … final byte. Dropped, never taken as letters. */
  private dropEscape(): void {
    const match = /^(\[[0-9;?]*[ -/]*[@-~]|O.)/.exec(this.buffer);
    if (match) this.buffer = this.buffer.slice(match[0].length);
  }
}

/**
 * Ctrl-C at a question, in raw mode, sends no SIGINT: during a run (a permission
 * question) it must still stop the run, as it does anywhere else in it, so the run's
 * handler is called before the question is answered (null), and no further step starts.
 */
function interrupted(): null {
  for (const listener of process.listeners("SIGINT")) listener("SIGINT");
  return null;
}
