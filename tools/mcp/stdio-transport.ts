import { type ChildProcess, spawn } from "node:child_process";
import { type JSONRPCMessage, type MCPTransport, validateJSONRPCMessage } from "@ai-sdk/mcp";
import { trackProcess } from "../../core/sandbox/live-processes.ts";

/** Bytes of a server's stderr kept (its last ones), to say why it stopped. */
const STDERR_TAIL_BYTES = 4096;
/** Lines of that stderr quoted when the server stops. */
const STDERR_LINES = 8;

/**
 * A stdio MCP transport (newline-delimited JSON-RPC on the program's stdin and
 * stdout) that remembers how its program ended: the exit code or signal and the
 * last lines of its stderr, so a server that fails to start or dies is
 * described in words, not as the client's "closed client". The AI SDK's own
 * StdioMCPTransport drops both.
 */
export class ServerProcessTransport implements MCPTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | null = null;
  private buffer = "";
  private stderr = Buffer.alloc(0);
  private ended: { code: number | null; signal: string | null } | null = null;
  private spawnError: Error | null = null;
  /** Set once Pencil asked it to stop: how it ended then is not the server's failure. */
  private closing = false;
  private readonly exited: Promise<void>;
  private markExited!: () => void;

  constructor(private readonly params: { command: string; args: string[]; env: Record<string, string>; cwd: string }) {
    this.exited = new Promise((resolve) => {
      this.markExited = resolve;
    });
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.params.command, this.params.args, {
        cwd: this.params.cwd,
        env: this.params.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      this.child = child;
      // A Pencil stopped by a signal ends the server's whole tree (app/stop-on-signal.ts), launcher and namespace.
      const untrack = child.pid !== undefined ? trackProcess(child.pid) : () => {};
      child.once("exit", untrack);
      child.once("spawn", () => resolve());
      child.once("error", (error) => {
        this.spawnError = error;
        this.markExited();
        reject(error);
        this.onerror?.(error);
      });
      child.once("exit", (code, signal) => {
        this.ended = { code, signal };
      });
      child.once("close", () => {
        this.markExited();
        this.child = null;
        this.onclose?.();
      });
      child.stdin!.on("error", (error) => this.onerror?.(error));
      child.stderr!.on("data", (chunk: Buffer) => {
        const all = Buffer.concat([this.stderr, chunk]);
        this.stderr = all.length > STDERR_TAIL_BYTES ? all.subarray(all.length - STDERR_TAIL_BYTES) : all;
      });
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (chunk: string) => this.receive(chunk));
    });
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    for (let nl = this.buffer.indexOf("\n"); nl !== -1; nl = this.buffer.indexOf("\n")) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, "");
      this.buffer = this.buffer.slice(nl + 1);
      if (line.trim() === "") continue;
      try {
        this.onmessage?.(validateJSONRPCMessage(JSON.parse(line)));
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) {
        reject(new Error(this.stopped() ?? "the server is not running"));
        return;
      }
      if (stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else stdin.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (child && this.ended === null) {
      this.closing = true;
      child.kill("SIGTERM");
      // A server that ignores SIGTERM is killed after a grace period.
      const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
      await this.exited;
      clearTimeout(timer);
    }
  }

  /**
   * How the program ended, in words ("exited with code 3; its stderr ended with: …"), waiting up to `waitMs` for
   * it to end; null while it is still running.
   */
  async stoppedWithin(waitMs: number): Promise<string | null> {
    if (this.ended === null && this.spawnError === null) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    return this.stopped();
  }

  /** How the program ended, in words; null while it runs, or when it ended because Pencil stopped it. */
  stopped(): string | null {
    if (this.spawnError) return `it could not be started (${this.spawnError.message})`;
    if (this.ended === null || this.closing) return null;
    const how =
      this.ended.signal !== null ? `was killed by ${this.ended.signal}` : `exited with code ${this.ended.code}`;
    const lines = this.stderrLines();
    return lines.length > 0
      ? `it ${how}; its stderr ended with:\n${lines.map((l) => `  ${l}`).join("\n")}`
      : `it ${how} and wrote nothing on stderr`;
  }

  /** The last lines of the program's stderr (ANSI escapes and stack frames removed, so an error's own line stays in view). */
  stderrLines(): string[] {
    const text = this.stderr
      .toString("utf8")
      .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, "")
      .replace(/\r/g, "");
    return text
      .split("\n")
      .map((l) => l.trimEnd())
      .filter((l) => l !== "" && !/^\s+at\s/.test(l))
      .slice(-STDERR_LINES);
  }
}
