import type { SessionEvent } from "../../agent/events.ts";
import { type CommandReport, formatCommandReport, parseCommandReport } from "../../render/command-result.ts";
import type { ButtonTokens, ResolvedButton } from "./button-tokens.ts";
import { escapeHtml } from "./html.ts";
import type { Outbox } from "./outbox.ts";

/** Failed commands told apart per run; past this many, the progress message's ✗ lines are all there is. */
const NOTICES_PER_RUN = 3;
/** Outputs kept for their "Full output" buttons; the oldest go first. */
const OUTPUTS_KEPT = 30;
/** Room for the lines shown in a notice (Telegram allows 4,096 characters a message). */
const NOTICE_CHARS = 3500;

/**
 * On the phone, a failed command gets a message of its own: its status, the lines
 * around its first failure and its last lines, and a "📄 Full output" button that sends
 * the whole output (as the model read it) as a document. Reading only: nothing here
 * decides or applies anything.
 */
export class CommandFailures {
  private readonly outputs = new Map<string, { command: string; output: string }>();
  private next = 0;

  constructor(
    private readonly outbox: Outbox,
    private readonly tokens: ButtonTokens,
    private readonly ownerId: number,
    private readonly report: (what: string, error: unknown) => void,
  ) {}

  /** An event sink for one run: sends a notice for each of its first few failed commands. */
  forRun(): (event: SessionEvent) => void {
    let sent = 0;
    return (event) => {
      if (event.type !== "tool-result" || event.tool !== "run_command") return;
      const report = parseCommandReport(event.output);
      if (!report || (report.end === "exit" && report.exitCode === 0)) return;
      if (sent >= NOTICES_PER_RUN) return;
      sent += 1;
      void this.notify(report, event.output).catch((error) => this.report("a failed command's notice", error));
    };
  }

  private async notify(report: CommandReport, output: string): Promise<void> {
    const command = report.command;
    const id = `out-${Date.now().toString(36)}-${(this.next++).toString(36)}`;
    this.outputs.set(id, { command, output });
    while (this.outputs.size > OUTPUTS_KEPT) this.outputs.delete(this.outputs.keys().next().value!);
    let shown = formatCommandReport(report, { color: false, head: 2, tail: 3 });
    if (shown.length > NOTICE_CHARS) shown = `${shown.slice(0, NOTICE_CHARS)}\n…`;
    const [token] = this.tokens.issue([
      { action: "command-output", subject: id, item: "all", digest: "", owner: this.ownerId },
    ]);
    await this.outbox.send(this.ownerId, `<pre>${escapeHtml(shown.trimEnd())}</pre>`, {
      inline_keyboard: [[{ text: "📄 Full output", callback_data: token! }]],
    });
  }

  /** A "Full output" press: the whole output as a document, or why it is gone. */
  async press(button: ResolvedButton): Promise<string> {
    const kept = this.outputs.get(button.subject);
    if (!kept) return "That output is no longer kept (the bot keeps the last 30, until it restarts).";
    const name = `${kept.command.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 40) || "command"}.txt`;
    await this.outbox.document(
      this.ownerId,
      name,
      kept.output,
      `<code>$ ${escapeHtml(kept.command.slice(0, 200))}</code>`,
    );
    return "Sent the full output.";
  }
}
