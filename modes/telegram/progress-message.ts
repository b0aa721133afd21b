import { formatContext, type SessionEvent } from "../../agent/events.ts";
import { escapeHtml } from "./html.ts";
import type { Outbox } from "./outbox.ts";
import { stepInWords } from "./step-words.ts";

/** Tool lines kept on the progress message; older ones are counted. */
const SHOWN_LINES = 12;
/** Telegram allows about one edit per second per chat; this is the default spacing. */
const DEFAULT_EDIT_INTERVAL_MS = 1000;

/**
 * One message that follows a run: a line per tool call (✓/✗ when its result
 * arrives), the step and context meter, edited at most once per interval (the last
 * change is never lost: a trailing edit is scheduled), and closed with the run's
 * summary line.
 */
export class ProgressMessage {
  private messageId: number | null = null;
  private readonly lines: { callId: string; text: string }[] = [];
  private hidden = 0;
  private meter = "";
  private lastEdit = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inFlight: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Edits made so far (for tests and the bench). */
  edits = 0;

  constructor(
    private readonly outbox: Outbox,
    private readonly chatId: number,
    private readonly title: string,
    private readonly intervalMs = DEFAULT_EDIT_INTERVAL_MS,
  ) {}

  /** The message's id once sent (null before). */
  get id(): number | null {
    return this.messageId;
  }

  /** Sends the message. */
  async start(): Promise<void> {
    const msg = await this.outbox.send(this.chatId, this.render("⏳"));
    this.messageId = msg.message_id;
    this.lastEdit = Date.now();
  }

  /** The event sink to give the run. */
  readonly sink = (event: SessionEvent): void => {
    if (this.closed) return;
    switch (event.type) {
      case "tool-call":
        this.push(event.callId, `• ${stepInWords(event.tool, event.input)}`);
        break;
      case "tool-result": {
        const line = this.lines.find((l) => l.callId === event.callId);
        const mark = event.ok ? "✓" : "✗";
        if (line) line.text = line.text.replace(/^• /, `${mark} `);
        else this.push(event.callId, `${mark} ${event.tool}`);
        break;
      }
      case "policy":
        if (event.decision === "deny") this.push(`${event.callId}-deny`, `⛔ ${event.access} ${event.path}: denied`);
        break;
      case "step-end":
        this.meter = `step ${event.step} · ${formatContext(event.context)} · ${event.model}`;
        break;
      case "model-fallback":
        this.push(`fallback-${Date.now()}`, `↪ ${event.from} failed, using ${event.to}`);
        break;
      case "error":
        this.push(`error-${Date.now()}`, `⚠ ${event.message.slice(0, 200)}`);
        break;
      default:
        return;
    }
    this.schedule();
  };

  /** Stops editing and shows the final state with the summary line (HTML). */
  async finish(summaryHtml: string): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.inFlight;
    if (this.messageId === null) return;
    await this.outbox.edit(this.chatId, this.messageId, `${this.render("")}\n${summaryHtml}`);
    this.edits += 1;
  }

  private push(callId: string, text: string): void {
    this.lines.push({ callId, text });
    while (this.lines.length > SHOWN_LINES) {
      this.lines.shift();
      this.hidden += 1;
    }
  }

  private schedule(): void {
    if (this.timer || this.messageId === null) return;
    const wait = Math.max(0, this.lastEdit + this.intervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.closed) return;
      this.lastEdit = Date.now();
      this.edits += 1;
      this.inFlight = this.inFlight.then(() => this.outbox.edit(this.chatId, this.messageId!, this.render("⏳")));
    }, wait);
  }

  private render(mark: string): string {
    const head = `${mark ? `${mark} ` : ""}<b>${escapeHtml(this.title)}</b>`;
    const more = this.hidden > 0 ? [`… ${this.hidden} earlier`] : [];
    const body = [...more, ...this.lines.map((l) => l.text)].map(escapeHtml).join("\n");
    const meter = this.meter ? `\n<i>${escapeHtml(this.meter)}</i>` : "";
    return `${head}${body ? `\n${body}` : ""}${meter}`;
  }
}
