import type { ModelMessage, UserContent } from "ai";
import type { EventSink } from "../agent/events.ts";
import type { RunMode } from "../agent/prompts.ts";
import type { SessionOutcome } from "../agent/session.ts";
import type { ApplyResult } from "../core/apply/apply.ts";
import type { Plan } from "../core/plan-schema.ts";
import type { Changeset } from "../core/staging/changeset.ts";
import { type ModelChoice, RunModels } from "./model-choice.ts";
import { RunChangeset, type SettledRecord } from "./run-changeset.ts";
import { RunMeter } from "./run-cost.ts";
import { RunStaging } from "./run-staging.ts";
import { type RunHooks, runTurn, type TurnOptions } from "./run-turn.ts";
import type { Runtime } from "./runtime.ts";
import { SavedSession } from "./saved-session.ts";
import { SessionKeeper, startRun } from "./session-keeper.ts";
import { reopenSession, resumeChangeset, type RunStart, sessionStore } from "./session-reopen.ts";
import type { RunRecord } from "./session-store.ts";
import type { Rejection } from "./rejection.ts";
import { followUpMessage, revisionMessage, runMemory } from "./turn-messages.ts";

/** Extra knobs for a run; tests and the demo pass their own model. */
export interface RunOptions extends TurnOptions {
  models?: ModelChoice;
  /** A model as `--model` takes it, used instead of the runtime's (the phone's `/model` choice); `models` wins over it. */
  model?: string;
  /** The first user message's content when it is more than the goal (a photo, an attached log). */
  firstMessage?: UserContent;
  /**
   * Documents the owner attached, whose text is in `firstMessage`: scanned like what the agent reads, so a change
   * staged after one that holds text addressed to an AI is flagged `after-instructions`, the document named.
   */
  documents?: { name: string; text: string }[];
  /** What a front end wants kept with the running mark, to close its traces after a crash (the bot's progress message). */
  runTag?: Record<string, string | number>;
}

/**
 * One piece of work: a goal, a session that stages into its own overlay, and the
 * changeset it produced. The same object serves the terminal and Telegram; it does
 * no I/O to the user, only emits events and asks its Approver. It sequences the
 * jobs of others: a turn (`runTurn`), what is staged (`RunStaging`), the changeset
 * and how its review went (`RunChangeset`), the saved session (`SessionKeeper`).
 */
export class AgentRun {
  messages: ModelMessage[] = [];
  outcome: SessionOutcome | null = null;
  /** How many times the owner sent the work back with reasons. */
  rounds = 0;
  /** A plan run's plan, once the model submitted it (null before, and for other modes). */
  plan: Plan | null = null;
  /** Tokens (and reported dollars) per model over every turn of this AgentRun, for the session's cost. */
  readonly meter = new RunMeter();
  /** The last finished run of this AgentRun, as its session recorded it (null before one finished). */
  lastRun: RunRecord | null = null;
  private readonly sink: { emit: EventSink } = { emit: () => {} };
  private readonly staging: RunStaging;
  private readonly models: RunModels;
  private readonly keeper = new SessionKeeper(null, this.sink);
  private readonly changes: RunChangeset;
  /** The owner's words for the work of the current changeset: the goal, or a later turn's request (with a pending one's title before it). */
  private turnGoal: string | null = null;
  /** The owner's words for the run under way (a follow-up's text, or what a revision answers); null: the goal. */
  private turnText: string | null = null;
  private readonly notes: string[] = [];
  private tag: Record<string, string | number> | undefined;

  private constructor(
    readonly runtime: Runtime,
    readonly mode: RunMode,
    readonly goal: string,
    private readonly options: RunOptions,
  ) {
    this.staging = new RunStaging(runtime);
    this.models = new RunModels(runtime, options, this.sink);
    this.changes = new RunChangeset(runtime, { mode, goal }, this.staging, this.keeper, this.sink);
  }

  /** The run's staged view of the tree. */
  get overlay() {
    return this.staging.overlay;
  }

  /** Every command the run asked to run, in order (saved with each changeset). */
  get commands() {
    return this.staging.commands;
  }

  /** The changeset the run's staging was last saved as (an edit of the staged content replaces it). */
  get changeset(): Changeset | null {
    return this.changes.current;
  }

  set changeset(changeset: Changeset | null) {
    this.changes.current = changeset;
  }

  /** The saved session this run lives in (null only when saving is impossible, e.g. a damaged session was reopened read-only). */
  get session(): SavedSession | null {
    return this.keeper.session;
  }

  /** How the last changeset settled from its stored record was decided (on reopening: elsewhere). */
  get lastSettled(): SettledRecord | null {
    return this.changes.lastSettled;
  }

  /**
   * Switches the model for the rest of this session (`/model NAME`): NAME as `--model` takes it. Throws
   * the model configuration's own error (a missing key, a malformed name) and changes nothing then.
   */
  switchModel(name: string): string[] {
    return this.models.switchTo(name);
  }

  /** The labels of the model chain, primary first. */
  get modelLabels(): string[] {
    return this.models.choice.labels;
  }

  /**
   * Reopens a saved pending changeset as a run (after a restart, or from
   * `pencil review`), with its staged content and, when saved, its conversation,
   * so rejections with reasons can still go back to the agent.
   */
  static resume(runtime: Runtime, changeset: Changeset, options: RunOptions = {}): AgentRun {
    return AgentRun.reopen(runtime, resumeChangeset(runtime, changeset), options);
  }

  /**
   * Reopens a saved session (`-c`, `--resume`, a restart after a crash): its
   * conversation (checked against the AI SDK's message schema), its staged files,
   * and its current changeset. Throws SessionFileError for a damaged or newer session.
   */
  static continueSession(runtime: Runtime, id: string, options: RunOptions = {}, asMode?: RunMode): AgentRun {
    const run = AgentRun.reopen(runtime, reopenSession(runtime, id, asMode), options);
    // A changeset decided elsewhere since (pencil review, the phone) leaves the staging now: its files are not
    // "changed on disk" because they were applied, and the next turn starts a changeset of its own.
    const settled = run.changes.takeInReview();
    if (run.lastSettled) run.notes.push(...settled);
    return run;
  }

  /** A run that goes on from what was read back from disk (session-reopen.ts). */
  private static reopen(runtime: Runtime, start: RunStart, options: RunOptions): AgentRun {
    const run = new AgentRun(runtime, start.mode, start.goal, options);
    run.messages = start.messages;
    for (const entry of start.staged) run.overlay.adopt(entry);
    run.overlay.drainChanged();
    run.keeper.session = start.session;
    run.changeset = start.changeset;
    return run;
  }

  /** Starts a run and waits for the model to finish; the changeset (if anything was staged) is saved as pending. */
  static async start(
    runtime: Runtime,
    mode: RunMode,
    goal: string,
    hooks: RunHooks,
    options: RunOptions = {},
  ): Promise<AgentRun> {
    const run = AgentRun.open(runtime, mode, goal, options);
    await run.begin(hooks);
    return run;
  }

  /** A new run in a new session, saved but not started yet (so a front end holds it before the model is called: Ctrl-C can save it). */
  static open(runtime: Runtime, mode: RunMode, goal: string, options: RunOptions = {}): AgentRun {
    const run = new AgentRun(runtime, mode, goal, options);
    run.messages = [{ role: "user", content: options.firstMessage ?? goal }];
    for (const doc of options.documents ?? []) run.staging.document(doc.name, doc.text);
    const session = SavedSession.create(sessionStore(runtime), { workspace: runtime.ws.root, mode, goal });
    run.keeper.session = session;
    session.saveTurn(run.messages);
    return run;
  }

  /** Runs the model on an opened run's goal. */
  async begin(hooks: RunHooks): Promise<void> {
    await this.go(hooks);
  }

  /**
   * Saves what is staged now as the pending changeset and ends the running mark,
   * without waiting for the model (a second Ctrl-C, a run found interrupted after
   * a crash). Returns the changeset, or null when nothing is staged.
   */
  saveNow(): Changeset | null {
    const reviewed = this.changes.takeInReview();
    if (!this.changes.continuesPending) this.notes.push(...reviewed);
    this.keeper.step(this.messages, this.overlay, this.runtime.ws);
    this.changes.saveStaged(this.turnGoal, this.messages);
    this.keeper.finish(this.changeset?.id ?? null);
    return this.changeset;
  }

  /** Kept with the running mark from now on: what a front end needs to close its traces if the process dies mid-run. */
  tagRun(tag: Record<string, string | number>): void {
    this.tag = tag;
  }

  /** Something the agent is told with the next follow-up (say, files that changed on disk since the session was saved). */
  noteForNextTurn(text: string): void {
    this.notes.push(text);
  }

  /** Staged files whose disk content changed since they were staged (the owner's edits, another front end's apply). */
  changedOnDisk(): string[] {
    return this.staging.changedOnDisk();
  }

  /**
   * The owner's next message in the same session (the `› ` prompt, plain text on
   * the phone, `-c "…"`): what happened in the review since is told first, then
   * the message; files still pending stay staged and the changeset grows.
   */
  async followUp(text: string, hooks: RunHooks): Promise<void> {
    const note = [...this.notes.splice(0), ...this.changes.takeInReview()];
    // A follow-up on pending work adds its words to that changeset's title; after a decided one it starts its own,
    // titled with its own words and counting only its own commands.
    this.turnText = text;
    const pending = this.changes.continuesPending ? this.changeset : null;
    if (pending) this.turnGoal = `${pending.goal} · then: ${text}`;
    else {
      this.turnGoal = text;
      this.staging.startOwnRecord();
    }
    const message = followUpMessage(note, text);
    this.messages.push(message);
    this.keeper.turn([message]);
    await this.go(hooks);
  }

  /**
   * Sends the owner's verdict back: rejected files are dropped from the overlay,
   * the reasons become the next user message, and the agent's new staging becomes
   * a new pending changeset that revises the old one.
   */
  async revise(rejections: Rejection[], hooks: RunHooks, applied?: ApplyResult): Promise<void> {
    const previous = this.changeset;
    this.rounds += 1;
    this.turnText = `revision after the review of ${previous?.id ?? "the staged changes"}`;
    this.changes.sentBack(rejections, applied);
    const message = revisionMessage(rejections, applied);
    this.messages.push(message);
    this.keeper.turn([message]);
    await this.go(hooks);
  }

  /**
   * Stages a file the user asked for outside the tool loop (ask's "save this
   * answer"), judged by the same policy, and returns the new pending changeset.
   */
  stageUserFile(path: string, text: string): Changeset {
    this.staging.stageUserFile(path, text, () => this.models.choice.current());
    const changeset = this.changes.snapshot(this.turnGoal, this.messages);
    if (!changeset) throw new Error(`${path} already holds exactly this answer; nothing to save.`);
    this.changeset = changeset;
    return changeset;
  }

  /** One turn of the model, then its staging saved as the pending changeset and the run recorded in the session. */
  private async go(given: RunHooks): Promise<void> {
    const hooks: RunHooks = {
      ...given,
      emit: (event) => {
        this.meter.sink(event);
        this.staging.observe(event);
        given.emit(event);
      },
    };
    this.sink.emit = hooks.emit;
    const started = startRun(this.turnText ?? this.goal, this.mode, this.commands);
    const outcome = await runTurn(
      {
        runtime: this.runtime,
        mode: this.mode,
        goal: this.goal,
        options: this.options,
        staging: this.staging,
        models: this.models,
        keeper: this.keeper,
        messages: this.messages,
        memory: () => runMemory(this.goal, this.session, this.runtime.ws, this.overlay),
        runTag: () => this.tag ?? this.options.runTag,
        onPlan: (plan) => {
          this.plan = plan;
        },
      },
      hooks,
    );
    this.outcome = outcome;
    this.messages = outcome.messages;
    this.keeper.step(outcome.messages, this.overlay, this.runtime.ws, outcome.models[outcome.models.length - 1]);
    this.changes.saveStaged(this.turnGoal, this.messages);
    await this.changes.checkIntent(this.models.choice, hooks);
    this.lastRun = this.keeper.finishRun(started, this.changeset?.id ?? null, this.commands);
  }
}
