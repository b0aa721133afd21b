import type { CommandFailures } from "./command-failures.ts";
import type { Plan } from "../../core/plan-schema.ts";
import type { RunMode } from "../../agent/prompts.ts";
import type { ApplyResult } from "../../core/apply/apply.ts";
import { modelSpecs } from "../../ai/model-specs.ts";
import { AgentRun, type RunOptions } from "../../app/agent-run.ts";
import type { Rejection } from "../../app/rejection.ts";
import type { RunHooks } from "../../app/run-turn.ts";
import type { Runtime } from "../../app/runtime.ts";
import type { ButtonTokens, ResolvedButton } from "./button-tokens.ts";
import { RunMeter, usageLine } from "../../app/run-cost.ts";
import type { CostLedger } from "./cost-ledger.ts";
import { escapeHtml } from "./html.ts";
import { markdownToTelegram } from "./markdown-html.ts";
import type { Keyboard, Outbox } from "./outbox.ts";
import type { PlanDesk } from "./plan-desk.ts";
import { ProgressMessage } from "./progress-message.ts";
import type { QuestionDesk } from "./question-desk.ts";
import type { ReviewDesk } from "./review-desk.ts";
import type { ActiveRun, RunGate } from "./run-gate.ts";
import { summaryLine } from "./run-summary.ts";
import { readState, writeState } from "./state-file.ts";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Changeset } from "../../core/staging/changeset.ts";

/** What the launcher needs from the bot. */
export interface LauncherDeps {
  runtime: Runtime;
  /** Sends a notice for a run's failed commands (absent: none is sent). */
  failures?: CommandFailures;
  outbox: Outbox;
  tokens: ButtonTokens;
  gate: RunGate;
  review: ReviewDesk;
  questions: QuestionDesk;
  plans: PlanDesk;
  ownerId: number;
  /** Reports an error to the log and the owner. */
  report: (what: string, error: unknown) => void;
  /** Extra run options per mode (tests and the demo pass their own model). */
  runOptions?: (mode: RunMode) => RunOptions;
  progressIntervalMs?: number;
  /** How often "typing…" is renewed while the model works (default TYPING_RENEW_MS). */
  typingRenewMs?: number;
  /** Runs going on in every workspace (a Cancel button stops its run wherever it goes); default: the gate's. */
  allRuns?: () => ActiveRun[];
  /** Where each finished run's tokens are added up (for /status); no footer cost without it. */
  costs?: CostLedger;
  /** The run gate of a workspace (one run at a time in each); default: `gate`. */
  gateFor?: (root: string) => RunGate;
  /** A workspace's name, shown on every progress message. */
  workspaceName?: (root: string) => string;
}

/** Telegram's typing status lasts about five seconds; renewed a little before it lapses. */
const TYPING_RENEW_MS = 4500;

const KIND_LABEL: Record<ActiveRun["kind"], string> = { agent: "Agent", plan: "Plan", ask: "Ask", revise: "Revising" };

/**
 * Starts agent, plan and ask runs detached from the update handler (grammY handles
 * updates one at a time, so awaiting a run there would block the very press that
 * approves its question), one at a time per workspace, each with a progress message
 * and Telegram questions; then hands the result on: a review card, a plan, an answer.
 */
export class RunLauncher {
  /** Goals sent while a changeset was pending, kept until the owner picks what to do with them. */
  private readonly heldGoals = new Map<string, { goal: string; changesetId: string }>();
  private readonly sessionFile: string;

  constructor(private readonly deps: LauncherDeps) {
    this.sessionFile = join(deps.runtime.pencilHome, "telegram", "sessions.json");
  }

  /** The session plain text continues in the current workspace, and whether /new asked for a fresh one; kept on disk across restarts. */
  sessionState(): { session: string | null; fresh: boolean } {
    const saved = this.savedSessions()[this.deps.runtime.ws.root];
    return { session: typeof saved?.session === "string" ? saved.session : null, fresh: saved?.fresh === true };
  }

  /** /new: the next message in the current workspace starts a fresh session. */
  startFresh(): void {
    this.saveSessionState(this.deps.runtime.ws.root, { session: null, fresh: true });
  }

  /** The model `/model` chose for the runs of the current workspace (as `--model` takes it), or null: the configured one. */
  chosenModel(root = this.deps.runtime.ws.root): string | null {
    const model = this.savedSessions()[root]?.model;
    return typeof model === "string" && model ? model : null;
  }

  /** `/model NAME`: every run the bot starts in the current workspace from now on uses `model` (null: the configured one again). */
  chooseModel(model: string | null): void {
    const root = this.deps.runtime.ws.root;
    writeState(this.sessionFile, { ...this.savedSessions(), [root]: { ...this.savedSessions()[root], model } });
  }

  /** The labels of the chain a run in the current workspace would use now (empty when none is configured). */
  modelsInUse(): string[] {
    const given = this.deps.runOptions?.("agent").models;
    if (given) return given.labels;
    try {
      return modelSpecs(this.deps.runtime.env, this.chosenModel() ?? this.deps.runtime.model).map((s) => s.label);
    } catch {
      return [];
    }
  }

  private savedSessions(): Record<string, { session?: unknown; fresh?: unknown; model?: unknown }> {
    const saved = readState<Record<string, { session?: unknown; fresh?: unknown; model?: unknown }>>(
      this.sessionFile,
      {},
    );
    return saved && typeof saved === "object" ? saved : {};
  }

  private saveSessionState(root: string, state: { session: string | null; fresh: boolean }): void {
    // The model chosen with /model outlives sessions: it is the workspace's until changed.
    writeState(this.sessionFile, { ...this.savedSessions(), [root]: { ...this.savedSessions()[root], ...state } });
  }

  /** A run's options in workspace `root`: the model /model chose there, then the bot's own (tests and the demo pass a model). */
  private optionsFor(mode: RunMode, root: string): RunOptions {
    const model = this.chosenModel(root);
    return { ...(model ? { model } : {}), ...this.deps.runOptions?.(mode) };
  }

  /**
   * Plain text from the owner: the next turn of the current session (it sees the
   * earlier turns and how their changes were reviewed); after /new, a fresh run.
   * A voice goal's Run comes here too, so both decide alike. Returns whether the
   * run started ("held" when it cannot start now: the message says why), or
   * "no-session" when there is no session to continue (the caller decides).
   */
  async followUp(text: string): Promise<"started" | "held" | "no-session"> {
    const state = this.sessionState();
    if (state.fresh) return (await this.launch("agent", text)) ? "started" : "held";
    if (!state.session) return "no-session";
    return (await this.continueIn(state.session, text)) ? "started" : "held";
  }

  /** Runs `text` as the next turn of session `id` (detached, like every run); false when it could not start (the owner is told why). */
  async continueIn(id: string, text: string): Promise<boolean> {
    // The workspace is fixed now: a switch while the run starts must not move it.
    const runtime = this.deps.runtime;
    const gate = this.gateOf(runtime.ws.root);
    if (gate.active) {
      const busy = this.busy("agent")!;
      await this.deps.outbox.send(this.deps.ownerId, busy.html, busy.keyboard);
      return false;
    }
    let run: AgentRun;
    try {
      // Reloaded from disk every turn: the terminal may have reviewed, rewound or continued the session meanwhile.
      run = AgentRun.continueSession(runtime, id, this.optionsFor("agent", runtime.ws.root));
    } catch (error) {
      await this.deps.outbox.send(
        this.deps.ownerId,
        `⚠️ Session <code>${escapeHtml(id)}</code> cannot be continued: ${escapeHtml(error instanceof Error ? error.message : String(error))}\nSend /new to start afresh.`,
      );
      return false;
    }
    const begun = gate.tryBegin("agent", text)!;
    this.detach(begun, gate, runtime.ws.root, async (hooks, tag) => {
      run.tagRun(tag);
      await run.followUp(text, hooks);
      return run;
    });
    return true;
  }

  /** Acts on a held goal's button: go on with the changeset pending, review it first, or discard it. */
  async goalPress(button: ResolvedButton): Promise<string> {
    const held = this.heldGoals.get(button.subject);
    if (!held) return "This goal is no longer waiting.";
    const cs = this.loadOrNull(held.changesetId);
    if (button.action === "goal-review") {
      if (cs && cs.status === "pending") await this.deps.review.present(cs, this.deps.review.liveRun(cs.id));
      const [go] = this.deps.tokens.issue([
        {
          action: "goal-continue",
          subject: button.subject,
          item: "goal",
          digest: button.subject,
          owner: this.deps.ownerId,
        },
      ]);
      await this.deps.outbox.send(
        this.deps.ownerId,
        `Your goal is kept: <i>${escapeHtml(held.goal.slice(0, 300))}</i>\nPress ▶️ when you have reviewed.`,
        { inline_keyboard: [[{ text: "▶️ Run the goal", callback_data: go! }]] },
      );
      return "Card sent.";
    }
    this.heldGoals.delete(button.subject);
    this.deps.tokens.revokeSubject(button.subject);
    if (button.action === "goal-discard") {
      if (cs && cs.status === "pending") await this.deps.review.discardNow(cs);
      await this.launch("agent", held.goal);
      return "Discarded; starting.";
    }
    // Continue: the goal becomes the next turn of the changeset's session, which still holds what is pending.
    if (cs?.session) await this.continueIn(cs.session, held.goal);
    else await this.launch("agent", held.goal);
    return "Starting.";
  }

  private loadOrNull(id: string): Changeset | null {
    try {
      return this.deps.runtime.store.load(id);
    } catch {
      return null;
    }
  }

  /** A goal sent while a changeset is pending is not dropped: it is held, with buttons for what to do. */
  private holdGoal(goal: string, pending: Changeset): { html: string; keyboard: Keyboard } {
    const subject = `g-${randomBytes(6).toString("hex")}`;
    this.heldGoals.set(subject, { goal, changesetId: pending.id });
    const [go, review, discard] = this.deps.tokens.issue(
      (["goal-continue", "goal-review", "goal-discard"] as const).map((action) => ({
        action,
        subject,
        item: "goal",
        digest: subject,
        owner: this.deps.ownerId,
      })),
    );
    return {
      html:
        `⏸ Changeset <code>${escapeHtml(pending.id)}</code> (${pending.files.length} ${pending.files.length === 1 ? "file" : "files"}) is still pending. Your goal is kept: <i>${escapeHtml(goal.slice(0, 300))}</i>\n` +
        "Continue with it pending (the agent builds on it), review it first, or discard it and start afresh?",
      keyboard: {
        inline_keyboard: [
          [{ text: "▶️ Continue with it pending", callback_data: go! }],
          [
            { text: "📝 Review first", callback_data: review! },
            { text: "🗑 Discard it", callback_data: discard! },
          ],
        ],
      },
    };
  }

  /** Starts a run, or answers why it cannot start now (with buttons); resolves as soon as the run is under way, true when it started. */
  async launch(mode: RunMode, goal: string, extra: { options?: RunOptions; note?: string } = {}): Promise<boolean> {
    const busy = this.busy(mode, goal);
    if (busy) {
      await this.deps.outbox.send(this.deps.ownerId, busy.html, busy.keyboard);
      return false;
    }
    // The workspace is fixed now: a switch while the run starts must not move it.
    const runtime = this.deps.runtime;
    const gate = this.gateOf(runtime.ws.root);
    const active = gate.tryBegin(mode, goal)!;
    const options: RunOptions = { ...this.optionsFor(mode, runtime.ws.root), ...extra.options };
    this.detach(
      active,
      gate,
      runtime.ws.root,
      async (hooks, tag) => {
        const run = AgentRun.open(runtime, mode, goal, options);
        run.tagRun(tag);
        this.remember(run);
        await run.begin(hooks);
        return run;
      },
      extra.note,
    );
    return true;
  }

  /** Each day's runs and tokens, when kept. */
  get costs(): CostLedger | undefined {
    return this.deps.costs;
  }

  /** The label of the model a run of `mode` would start with (to know whether it can see images). */
  primaryModel(mode: RunMode): string {
    const given = this.deps.runOptions?.(mode).models;
    if (given) return given.current();
    try {
      return modelSpecs(this.deps.runtime.env, this.chosenModel() ?? this.deps.runtime.model)[0]?.label ?? "";
    } catch {
      return "";
    }
  }

  /** Sends rejections back to the run that wrote them; the revision runs detached like any run. */
  revise(run: AgentRun, rejections: Rejection[], applied: ApplyResult): void {
    // The revision belongs to the run's workspace, whichever is active now.
    const gate = this.gateOf(run.runtime.ws.root);
    const active = gate.tryBegin("revise", run.goal);
    if (!active) {
      void this.deps.outbox
        .send(
          this.deps.ownerId,
          "Your reasons were not sent back: another run is going. Run /agent again with them when it ends.",
        )
        .catch((error) => this.deps.report("telling the owner a revision could not start", error));
      return;
    }
    void this.deps.outbox
      .send(
        this.deps.ownerId,
        `↩️ Sending ${rejections.length} ${rejections.length === 1 ? "reason" : "reasons"} back to the agent…`,
      )
      .catch(() => {});
    this.detach(active, gate, run.runtime.ws.root, async (hooks, tag) => {
      run.tagRun(tag);
      await run.revise(rejections, hooks, applied);
      return run;
    });
  }

  private gateOf(root: string): RunGate {
    return this.deps.gateFor?.(root) ?? this.deps.gate;
  }

  /** Stops the active run when `button` was made for it; returns the text to answer the press with. */
  cancelPress(button: ResolvedButton): string {
    const runs = this.deps.allRuns?.() ?? (this.deps.gate.active ? [this.deps.gate.active] : []);
    const active = runs.find((r) => r.id === button.subject);
    if (!active || active.controller.signal.aborted) return "This run is no longer going.";
    active.controller.abort();
    return "Cancelling…";
  }

  /** A Cancel button for the active run. */
  cancelButton(active: ActiveRun): Keyboard {
    const [data] = this.deps.tokens.issue([
      { action: "cancel-run", subject: active.id, item: "run", digest: active.id, owner: this.deps.ownerId },
    ]);
    return { inline_keyboard: [[{ text: "⏹ Cancel run", callback_data: data! }]] };
  }

  /** Why a run of `mode` cannot start now, as a message with buttons; null when it can. */
  private busy(mode: RunMode, goal = ""): { html: string; keyboard: Keyboard } | null {
    const active = this.deps.gate.active;
    if (active) {
      const seconds = Math.round((Date.now() - active.startedAt) / 1000);
      return {
        html: `⏳ One run at a time: <b>${KIND_LABEL[active.kind]}</b> <i>${escapeHtml(active.goal.slice(0, 200))}</i> is going (${seconds} s). Wait for it, or cancel it.`,
        keyboard: this.cancelButton(active),
      };
    }
    if (mode !== "agent") return null;
    const pending = this.deps.runtime.store.latestPending(this.deps.runtime.ws.root);
    return pending ? this.holdGoal(goal, pending) : null;
  }

  private detach(
    active: ActiveRun,
    gate: RunGate,
    root: string,
    body: (hooks: RunHooks, tag: Record<string, number>) => Promise<AgentRun>,
    note?: string,
  ): void {
    void this.execute(active, gate, root, body, note).catch((error) =>
      this.deps.report(`the ${active.kind} run`, error),
    );
  }

  private async execute(
    active: ActiveRun,
    gate: RunGate,
    root: string,
    body: (hooks: RunHooks, tag: Record<string, number>) => Promise<AgentRun>,
    note?: string,
  ): Promise<void> {
    const started = Date.now();
    let typingTimer: ReturnType<typeof setInterval> | undefined;
    const where = this.deps.workspaceName ? ` · 📍 ${this.deps.workspaceName(root)}` : "";
    const progress = new ProgressMessage(
      this.deps.outbox,
      this.deps.ownerId,
      `${KIND_LABEL[active.kind]}: ${active.goal.slice(0, 300)}${where}${note ? `\n${note}` : ""}`,
      this.deps.progressIntervalMs,
    );
    try {
      await progress.start();
      // Telegram shows "typing…" for about 5 s per action: renewed while a model step is under way.
      const typing = () => void this.deps.outbox.typing(this.deps.ownerId);
      const meter = new RunMeter();
      const failures = this.deps.failures?.forRun();
      const emit: RunHooks["emit"] = (event) => {
        meter.sink(event);
        failures?.(event);
        if (event.type === "model-request" || event.type === "step-start") {
          typing();
          clearInterval(typingTimer);
          typingTimer = setInterval(typing, this.deps.typingRenewMs ?? TYPING_RENEW_MS);
        } else if (event.type === "step-end" || event.type === "error") clearInterval(typingTimer);
        progress.sink(event);
      };
      const hooks: RunHooks = { approver: this.deps.questions.approver(), emit, signal: active.controller.signal };
      let run: AgentRun;
      try {
        // The progress message is kept with the session's running mark, so a restart after a crash can close it.
        run = await body(hooks, { chat: this.deps.ownerId, message: progress.id ?? 0 });
      } catch (error) {
        // The model's turn is over: no "typing…" may follow the message that says so.
        clearInterval(typingTimer);
        this.deps.costs?.add(meter.usage);
        await progress.finish(
          `<b>⚠️ The run could not go on</b>: ${escapeHtml(error instanceof Error ? error.message : String(error))}`,
        );
        throw error;
      }
      clearInterval(typingTimer);
      this.deps.costs?.add(meter.usage);
      const footer = `💰 ${((Date.now() - started) / 1000).toFixed(1)} s · ${usageLine(meter.usage, this.deps.costs?.prices() ?? {})}`;
      await progress.finish(`${summaryLine(run, Date.now() - started)}\n<i>${escapeHtml(footer)}</i>`);
      this.remember(run);
      await this.deliver(active, run, run.plan);
    } finally {
      clearInterval(typingTimer);
      gate.end(active);
    }
  }

  /** The run plain text continues from now on, in the run's workspace. */
  private remember(run: AgentRun): void {
    if (run.session) this.adoptSession(run.session.id, run.runtime.ws.root);
  }

  /** Plain text continues session `id` from now on in its workspace (a run found interrupted after a restart). */
  adoptSession(id: string, root = this.deps.runtime.ws.root): void {
    this.saveSessionState(root, { session: id, fresh: false });
  }

  /** Hands a finished run on: its final words, then a card, a plan or nothing. */
  private async deliver(active: ActiveRun, run: AgentRun, plan: Plan | null): Promise<void> {
    const text = run.outcome?.text.trim() ?? "";
    if (active.kind === "plan") {
      if (plan) return this.deps.plans.present(plan);
      await this.sendText(
        text ? `The model finished without a plan. Its last words:\n\n${text}` : "The model finished without a plan.",
      );
      return;
    }
    if (text) await this.sendText(text);
    if (run.changeset) await this.deps.review.present(run.changeset, run);
    else if (active.kind === "revise") await this.deps.outbox.send(this.deps.ownerId, "The agent staged nothing new.");
  }

  /** The model's markdown as Telegram HTML (code blocks kept), in as many messages as it needs. */
  private async sendText(text: string): Promise<void> {
    for (const html of markdownToTelegram(text)) await this.deps.outbox.send(this.deps.ownerId, html);
  }
}
