import { flagAfterInstructions, ReadFindings } from "./read-findings.ts";
import { checkIntent } from "./intent-check.ts";
import { modelMessageSchema, type LanguageModel, type ModelMessage, type UserContent } from "ai";
import { z } from "zod";
import { readFileSync, statSync } from "node:fs";
import { contextWindowOf } from "../ai/model-specs.ts";
import { resolveModels } from "../ai/resolve-models.ts";
import type { ApplyResult } from "../core/apply/apply.ts";
import type { CommandRecord } from "../core/staging/command-record.ts";
import { buildChangeset, newChangesetId, type Changeset } from "../core/staging/changeset.ts";
import { DiskFileOps } from "../core/file-ops.ts";
import { sha256 } from "../core/hash.ts";
import { Overlay } from "../core/staging/overlay.ts";
import { ReadLedger } from "../core/staging/read-ledger.ts";
import type { Plan } from "../core/plan-schema.ts";
import { createSubmitPlanTool } from "../tools/submit-plan.ts";
import type { PencilTool } from "../tools/tool.ts";
import { decide } from "../core/policy/policy.ts";
import { displayPath, resolveInWorkspace } from "../core/workspace.ts";
import type { Approver } from "../core/policy/approver.ts";
import type { EventSink } from "../agent/events.ts";
import { guardTools } from "../agent/policy-seam.ts";
import { LinkGuard } from "../core/policy/hard-links.ts";
import { systemPrompt, type RunMode } from "../agent/prompts.ts";
import { runToTheEnd } from "../agent/turn-end.ts";
import { RepeatedCalls } from "../agent/nudges.ts";
import { answerBudgetFor } from "../core/answer-budget.ts";
import { runSession, type SessionOutcome } from "../agent/session.ts";
import { instructionsFor, instructionsPrompt } from "./project-instructions.ts";
import { openRunMcp } from "./mcp-servers.ts";
import { RunMeter } from "./run-cost.ts";
import type { Runtime } from "./runtime.ts";
import { SavedSession } from "./saved-session.ts";
import { type RunRecord, SessionFileError, SessionStore } from "./session-store.ts";
import { PencilError, UnknownChangesetError } from "../core/errors.ts";
import { toolsFor } from "./toolbox.ts";

/** Who answers and who listens during a run; `signal` stops it (Ctrl-C, /cancel). */
export interface RunHooks {
  approver: Approver;
  emit: EventSink;
  signal?: AbortSignal;
}

/** The model a run uses: one LanguageModel (fallback inside), its chain's labels, and the label of the model in use. */
export interface ModelChoice {
  model: LanguageModel;
  labels: string[];
  current(): string;
  /** Context window in tokens. */
  contextWindow: number;
}

/** Extra knobs for a run; tests and the demo pass their own model. */
export interface RunOptions {
  models?: ModelChoice;
  /** A model as `--model` takes it, used instead of the runtime's (the phone's `/model` choice); `models` wins over it. */
  model?: string;
  /** Tools added to the mode's own (plan's fetch_url, submit_plan…). */
  extraTools?: PencilTool[];
  maxSteps?: number;
  /** Overrides the mode's system prompt. */
  system?: string;
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

/** A rejected file and the owner's reason, sent back to the agent. */
export interface Rejection {
  path: string;
  reason: string;
}

/** Rounds of "rejected with a reason → the agent revises" before a front end stops sending work back. */
export const MAX_REVISION_ROUNDS = 3;

const DEFAULT_MAX_STEPS = 40;

/**
 * Builds the model chain from the runtime's environment (throws MissingModelKeyError
 * → exit 2). Fallback switches are forwarded to whichever sink is current.
 */
export function chooseModels(runtime: Runtime, sink: { emit: EventSink }): ModelChoice {
  let current = "";
  const resolved = resolveModels(runtime.env, {
    ...(runtime.model ? { model: runtime.model } : {}),
    onModelUsed: (label) => {
      current = label;
    },
    onFallback: (event) => sink.emit({ type: "model-fallback", ...event }),
  });
  current = resolved.labels[0] ?? "";
  return {
    model: resolved.model,
    labels: resolved.labels,
    current: () => current,
    // The smallest window of the chain: a step the fallback serves must fit too.
    contextWindow: Math.min(
      ...resolved.specs.map((spec) => contextWindowOf(spec, runtime.env)),
      contextWindowOf(undefined, runtime.env),
    ),
  };
}

/**
 * One piece of work: a goal, a session that stages into its own overlay, and the
 * changeset it produced. The same object serves the terminal and Telegram; it does
 * no I/O to the user, only emits events and asks its Approver.
 */
export class AgentRun {
  readonly overlay = new Overlay(new DiskFileOps());
  readonly reads = new ReadLedger();
  /** Every command the run asked to run, in order (saved with each changeset). */
  readonly commands: CommandRecord[] = [];
  messages: ModelMessage[] = [];
  changeset: Changeset | null = null;
  outcome: SessionOutcome | null = null;
  /** How many times the owner sent the work back with reasons. */
  rounds = 0;
  /** A plan run's plan, once the model submitted it (null before, and for other modes). */
  plan: Plan | null = null;
  /** MCP calls judged in this run, for the changeset's record. */
  readonly mcpCalls: { tool: string; subject: string; decision: string; by: string }[] = [];
  /** The saved session this run lives in (null only when saving is impossible, e.g. a damaged session was reopened read-only). */
  session: SavedSession | null = null;
  private readonly sink: { emit: EventSink } = { emit: () => {} };
  /** Instructions addressed to an AI, or hidden text, in what this run read. */
  private readonly findings = new ReadFindings();
  private chosen: ModelChoice | undefined;
  /** True when the current changeset is still pending with nothing decided: the next snapshot keeps its id. */
  private continuesPending = false;
  /** The owner's words for the work of the current changeset: the goal, or a later turn's request (with a pending one's title before it). */
  private turnGoal: string | null = null;
  /** The owner's words for the run under way (a follow-up's text, or what a revision answers); null: the goal. */
  private turnText: string | null = null;
  /** How the last changeset settled from its stored record was decided (set by settleReview; on reopening: elsewhere). */
  lastSettled: { id: string; status: string; applied: string[]; rejected: string[] } | null = null;
  /** Tokens (and reported dollars) per model over every turn of this AgentRun, for the session's cost. */
  readonly meter = new RunMeter();
  /** The last finished run of this AgentRun, as its session recorded it (null before one finished). */
  lastRun: RunRecord | null = null;
  private saveWarned = false;
  private readonly notes: string[] = [];
  /** The changeset whose review was already taken into account. */
  private settledId: string | null = null;
  private tag: Record<string, string | number> | undefined;

  private constructor(
    readonly runtime: Runtime,
    readonly mode: RunMode,
    readonly goal: string,
    private readonly options: RunOptions,
  ) {}

  /**
   * Switches the model for the rest of this session (`/model NAME`): NAME as `--model` takes it. Throws
   * the model configuration's own error (a missing key, a malformed name) and changes nothing then.
   */
  switchModel(name: string): string[] {
    const chosen = chooseModels({ ...this.runtime, model: name }, this.sink);
    this.chosen = chosen;
    return chosen.labels;
  }

  /** The models, built on first use so reopening a changeset needs no key until the agent really runs. */
  private get models(): ModelChoice {
    this.chosen ??=
      this.options.models ??
      chooseModels(this.options.model ? { ...this.runtime, model: this.options.model } : this.runtime, this.sink);
    return this.chosen;
  }

  /**
   * Reopens a saved pending changeset as a run (after a restart, or from
   * `pencil review`), with its staged content and, when saved, its conversation,
   * so rejections with reasons can still go back to the agent.
   */
  static resume(runtime: Runtime, changeset: Changeset, options: RunOptions = {}): AgentRun {
    const mode: RunMode = changeset.mode === "plan" || changeset.mode === "ask" ? changeset.mode : "agent";
    const run = new AgentRun(runtime, mode, changeset.goal, options);
    for (const file of changeset.files) {
      run.overlay.adopt({
        real: file.real,
        base: file.base,
        after: file.after ? { bytes: file.after.bytes, mode: file.after.mode } : null,
        origins: file.origins,
        models: file.models,
        stagedAt: Date.parse(changeset.createdAt) || Date.now(),
      });
    }
    const saved = runtime.store.loadConversation(changeset.id) as ModelMessage[] | null;
    run.messages = saved ?? [{ role: "user", content: changeset.goal }];
    run.changeset = changeset;
    if (changeset.session) {
      try {
        const session = SavedSession.open(sessionStore(runtime), changeset.session);
        run.session = session;
        run.messages = validMessages(session.state().messages, session.id, session.checkedMessages);
      } catch {
        // A damaged session leaves the changeset reviewable; revisions then start from the saved conversation.
        run.session = null;
      }
    }
    run.overlay.drainChanged();
    return run;
  }

  /**
   * Reopens a saved session (`-c`, `--resume`, a restart after a crash): its
   * conversation (checked against the AI SDK's message schema), its staged files,
   * and its current changeset. Throws SessionFileError for a damaged or newer session.
   */
  static continueSession(runtime: Runtime, id: string, options: RunOptions = {}, asMode?: RunMode): AgentRun {
    const session = SavedSession.open(sessionStore(runtime), id);
    const header = session.header;
    if (header.workspace !== runtime.ws.root)
      throw new SessionFileError(
        `Session ${id} belongs to ${header.workspace}, not ${runtime.ws.root}: run it with -w ${header.workspace}.`,
      );
    // The next turn may be another kind of work than the first (ask -c after an agent run): same conversation, that mode's tools.
    const mode: RunMode = asMode ?? (header.mode === "plan" || header.mode === "ask" ? header.mode : "agent");
    const run = new AgentRun(runtime, mode, header.goal, options);
    const state = session.state();
    run.messages = validMessages(state.messages, id, session.checkedMessages);
    for (const entry of session.stagedEntries(state)) run.overlay.adopt(entry);
    run.overlay.drainChanged();
    run.session = session;
    if (header.changeset) {
      try {
        run.changeset = runtime.store.load(header.changeset);
      } catch (error) {
        // Only a record that is not there is none (the staged files come from the session and get a new one). One that
        // is there but unreadable would be orphaned by a new id while it may hold decisions: stop and say so.
        if (!(error instanceof UnknownChangesetError)) {
          const why = PencilError.isInstance(error) ? error.userMessage : (error as Error).message;
          throw new SessionFileError(
            `Session ${id}'s changeset ${header.changeset} cannot be read (${why}). Fix or move it aside, then continue the session; nothing was changed.`,
          );
        }
        run.changeset = null;
      }
    }
    // A changeset decided elsewhere since (pencil review, the phone) leaves the staging now: its files are not
    // "changed on disk" because they were applied, and the next turn starts a changeset of its own.
    const settled = run.settleReview();
    if (run.lastSettled) run.notes.push(...settled);
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
    for (const doc of options.documents ?? []) run.findings.document(doc.name, doc.text);
    run.session = SavedSession.create(sessionStore(runtime), { workspace: runtime.ws.root, mode, goal });
    run.session.saveTurn(run.messages);
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
    const reviewed = this.settleReview();
    if (!this.continuesPending) this.notes.push(...reviewed);
    this.trySave(() => this.session?.saveStep(this.messages, this.overlay, this.runtime.ws));
    this.changeset = this.snapshot(this.continuesPending ? undefined : this.changeset?.id);
    this.continuesPending = this.changeset !== null;
    this.trySave(() => this.session?.finishRun(this.changeset?.id ?? null));
    return this.changeset;
  }

  /** What compaction keeps whatever else goes: the goal, every rejection reason, what was applied and what is staged. */
  memory(): string {
    let applied: string[] = [];
    let rejections: { path: string; reason: string }[] = [];
    try {
      const state = this.session?.state();
      applied = state?.applied ?? [];
      rejections = state?.rejections ?? [];
    } catch {
      // A session that cannot be read still has its goal and overlay.
    }
    const staged = this.overlay.list().map((e) => displayPath(this.runtime.ws, e.real));
    return [
      "Session memory (kept when older turns are compacted):",
      `Goal: ${this.goal}`,
      rejections.length
        ? `The user rejected, with reasons (respect them):\n${rejections.map((r) => `- ${r.path}: ${r.reason}`).join("\n")}`
        : "No rejection reasons so far.",
      `Applied to disk so far: ${applied.join(", ") || "nothing"}.`,
      `Staged now, pending review: ${staged.join(", ") || "nothing"}.`,
    ].join("\n");
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
    const out: string[] = [];
    for (const entry of this.overlay.list()) {
      const disk = readDiskOrNull(entry.real);
      const now = disk ? sha256(disk) : null;
      if (now !== (entry.base.exists ? entry.base.hash : null)) out.push(displayPath(this.runtime.ws, entry.real));
    }
    return out;
  }

  /**
   * The owner's next message in the same session (the `› ` prompt, plain text on
   * the phone, `-c "…"`): what happened in the review since is told first, then
   * the message; files still pending stay staged and the changeset grows.
   */
  async followUp(text: string, hooks: RunHooks): Promise<void> {
    const note = [...this.notes.splice(0), ...this.settleReview()];
    // A follow-up on pending work adds its words to that changeset's title; after a decided one it starts its own,
    // titled with its own words and counting only its own commands.
    this.turnText = text;
    if (this.continuesPending && this.changeset) this.turnGoal = `${this.changeset.goal} · then: ${text}`;
    else {
      this.turnGoal = text;
      this.commands.length = 0;
      this.mcpCalls.length = 0;
    }
    const message: ModelMessage = {
      role: "user",
      content: [...note, note.length ? `The user's next request: ${text}` : text].join("\n"),
    };
    this.messages.push(message);
    this.saveTurn([message]);
    await this.go(hooks, this.continuesPending ? undefined : this.changeset?.id);
  }

  /** The labels of the model chain, primary first. */
  get modelLabels(): string[] {
    return this.models.labels;
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
    this.forgetReviewed(previous, applied);
    this.continuesPending = false;
    if (previous) this.saveReview(previous.id, applied?.applied ?? [], rejections);
    const lines = [
      "The user reviewed your staged changes.",
      applied && applied.applied.length > 0 ? `Applied to disk: ${applied.applied.join(", ")}.` : "",
      applied && applied.conflicts.length > 0
        ? `Not applied because the files changed on disk meanwhile: ${applied.conflicts.map((c) => c.path).join(", ")}. Read them again before changing them.`
        : "",
      "Rejected, with the user's reasons:",
      ...rejections.map((r) => `- ${r.path}: ${r.reason}`),
      "Revise the rejected changes according to these reasons. Files already applied are on disk now.",
    ].filter((l) => l !== "");
    const message: ModelMessage = { role: "user", content: lines.join("\n") };
    this.messages.push(message);
    this.saveTurn([message]);
    await this.go(hooks, previous?.id);
  }

  /**
   * Stages a file the user asked for outside the tool loop (ask's "save this
   * answer"), judged by the same policy, and returns the new pending changeset.
   */
  stageUserFile(path: string, text: string): Changeset {
    const resolved = resolveInWorkspace(this.runtime.ws, path);
    const verdict = decide(this.runtime.policy, { tool: "save_answer", access: "write", real: resolved.real });
    // The owner typed this path, which answers an "ask"; a deny stays a deny, and the write still goes through review.
    if (verdict.decision === "deny") throw new Error(`Cannot save to ${path}: ${verdict.reason}`);
    const existing = this.overlay.stat(resolved.real);
    if (existing && existing.kind !== "file") throw new Error(`${path} is a directory; give a file path.`);
    this.overlay.writeBytes(resolved.real, new TextEncoder().encode(text), {
      origin: {
        tool: "save_answer",
        callId: "user",
        model: this.models.current(),
        readsBefore: this.reads.readsSoFar(),
      },
    });
    const changeset = this.snapshot(this.changeset?.id);
    if (!changeset) throw new Error(`${path} already holds exactly this answer; nothing to save.`);
    this.changeset = changeset;
    return changeset;
  }

  /** This run as its session keeps it: the owner's words, what it ran since `commandsBefore`, and where its staging went. */
  private runRecord(startedAt: string, commandsBefore: number): RunRecord {
    return {
      goal: this.turnText ?? this.goal,
      mode: this.mode,
      startedAt,
      endedAt: new Date().toISOString(),
      changeset: this.changeset?.id ?? null,
      commands: this.commands.slice(commandsBefore),
    };
  }

  /** Everything still staged, as a fresh changeset (null when nothing is). Saved as pending. */
  private snapshot(revises?: string): Changeset | null {
    const staged = this.overlay.list();
    if (staged.length === 0) {
      // Everything of a still-pending changeset was unstaged (a rewind): it is no longer there to review.
      if (this.continuesPending && this.changeset) this.closePending(this.changeset.id, "discarded");
      return null;
    }
    const keep = this.continuesPending && this.changeset ? this.changeset.id : undefined;
    const goal = this.turnGoal ?? this.goal;
    const changeset = buildChangeset({
      id: keep ?? newChangesetId(),
      goal,
      workspace: this.runtime.ws,
      staged,
      readDisk: readDiskOrNull,
    });
    changeset.mode = this.mode;
    flagAfterInstructions(changeset, staged, this.findings.sources);
    if (this.commands.length > 0) changeset.commands = [...this.commands];
    if (this.mcpCalls.length > 0) changeset.mcpCalls = [...this.mcpCalls];
    if (revises && revises !== keep) changeset.revises = revises;
    else if (keep && this.changeset?.revises) changeset.revises = this.changeset.revises;
    if (this.session) changeset.session = this.session.id;
    if (goal !== this.goal) changeset.sessionGoal = this.goal;
    // The intent opinion of exactly this content and goal is kept: the model is never asked twice about it.
    const opinion = this.changeset?.intent;
    if (opinion && opinion.digest === changeset.digest && opinion.goal === changeset.goal) changeset.intent = opinion;
    this.runtime.store.save(changeset);
    this.runtime.store.saveConversation(changeset.id, this.messages);
    return changeset;
  }

  private async go(given: RunHooks, revises?: string): Promise<void> {
    // MCP calls are recorded as they are judged, so the review shows what ran outside the overlay.
    const hooks: RunHooks = {
      ...given,
      emit: (event) => {
        this.meter.sink(event);
        // What the agent reads is looked at for orders addressed to it; it only tells, in the review.
        if (event.type === "tool-call") this.findings.call(event.callId, event.input);
        if (event.type === "tool-result") this.findings.result(event.callId, event.tool, event.ok, event.output);
        if (event.type === "policy" && event.tool.startsWith("mcp__"))
          this.mcpCalls.push({
            tool: event.tool,
            subject: event.path,
            decision: event.decision,
            by: event.answeredBy ?? "rule",
          });
        given.emit(event);
      },
    };
    this.sink.emit = hooks.emit;
    const mcp = await openRunMcp(this.runtime, hooks.approver, hooks.signal);
    for (const notice of mcp.notices) hooks.emit({ type: "notice", message: notice });
    try {
      await this.goWith(hooks, mcp.tools, revises);
    } finally {
      await mcp.close();
    }
  }

  private async goWith(hooks: RunHooks, mcpTools: PencilTool[], revises?: string): Promise<void> {
    // The mode's tools are made for this run alone: what they keep for it (run_command's scratch) goes when it ends.
    const own = toolsFor(this.mode, this.runtime);
    try {
      await this.goWithTools(hooks, own, mcpTools, revises);
    } finally {
      await Promise.all(own.map((t) => t.close?.().catch(() => {})));
    }
  }

  private async goWithTools(
    hooks: RunHooks,
    own: PencilTool[],
    mcpTools: PencilTool[],
    revises?: string,
  ): Promise<void> {
    // A plan run ends when the model submits its plan, parsed by the plan schema.
    const startedAt = new Date().toISOString();
    const commandsBefore = this.commands.length;
    const planTools = this.mode === "plan" ? [createSubmitPlanTool((plan) => (this.plan = plan))] : [];
    const repeats = new RepeatedCalls();
    const tools = guardTools([...own, ...planTools, ...(this.options.extraTools ?? []), ...mcpTools], {
      ws: this.runtime.ws,
      policy: this.runtime.policy,
      approver: hooks.approver,
      fs: this.overlay,
      reads: this.reads,
      limits: this.runtime.limits,
      currentModel: () => this.models.current(),
      emit: hooks.emit,
      // Fresh each run: hard links made since the last one are indexed again.
      mcpPolicy: this.runtime.mcpPolicy,
      links: new LinkGuard({
        root: this.runtime.ws.root,
        home: this.runtime.ws.home,
        pencilHome: this.runtime.pencilHome,
      }),
      recordCommand: (record) => this.commands.push(record),
      answerBudget: answerBudgetFor(this.models.contextWindow),
      repeats,
      ...(hooks.signal ? { signal: hooks.signal } : {}),
    });
    this.trySave(() =>
      this.session?.markRunning({
        kind: this.mode,
        goal: this.goal,
        ...((this.tag ?? this.options.runTag) ? { tag: (this.tag ?? this.options.runTag)! } : {}),
      }),
    );
    const maxSteps = this.options.maxSteps ?? DEFAULT_MAX_STEPS;
    const session = (messages: ModelMessage[], stepsLeft: number) =>
      runSession(
        {
          model: this.models.model,
          modelLabel: () => this.models.current(),
          // The repository's AGENTS.md goes after Pencil's own rules, framed as ranking below them and the goal.
          system: (this.options.system ?? systemPrompt(this.mode)) + instructionsPrompt(instructionsFor(this.runtime)),
          tools,
          maxSteps: stepsLeft,
          contextWindow: this.models.contextWindow,
          emit: hooks.emit,
          ...(hooks.signal ? { signal: hooks.signal } : {}),
          ...(this.mode === "plan" ? { stopOnTool: "submit_plan" } : {}),
          memory: () => this.memory(),
          mustStop: () => repeats.stopReason,
          onStep: (messages, model) =>
            this.trySave(() => this.session?.saveStep(messages, this.overlay, this.runtime.ws, model)),
        },
        messages,
      );
    // How each round ended is looked at before the run ends "done" (a call written as text, an empty or cut reply, a claim with nothing staged).
    const outcome = await runToTheEnd(session, this.messages, {
      tools,
      nothingStaged: () => this.overlay.list().length === 0,
      emit: hooks.emit,
      memory: () => this.memory(),
      maxSteps,
      writes: this.mode === "agent",
      ...(this.mode === "plan" ? { stopOnTool: "submit_plan" } : {}),
    });
    this.outcome = outcome;
    this.messages = outcome.messages;
    this.trySave(() =>
      this.session?.saveStep(
        outcome.messages,
        this.overlay,
        this.runtime.ws,
        outcome.models[outcome.models.length - 1],
      ),
    );
    this.changeset = this.snapshot(revises);
    this.continuesPending = this.changeset !== null;
    await this.checkIntent(hooks);
    this.lastRun = this.runRecord(startedAt, commandsBefore);
    const record = this.lastRun;
    this.trySave(() => this.session?.finishRun(this.changeset?.id ?? null, record));
  }

  /**
   * The intent check (review.intentCheck): one structured call asking the chat model whether
   * the new changeset's diff does what its goal asked, waited for review.intentSeconds at
   * most, before any front end shows the review. Its opinion (or why there is none) is saved
   * with the changeset, so every later view shows the same line without a second call.
   */
  private async checkIntent(hooks: RunHooks): Promise<void> {
    const cs = this.changeset;
    const settings = this.runtime.settings.review;
    if (!cs || cs.intent || !settings.intentCheck || hooks.signal?.aborted) return;
    const { opinion, usage } = await checkIntent({
      changeset: cs,
      model: this.models.model,
      label: this.models.current(),
      timeoutMs: settings.intentSeconds * 1000,
      ...(hooks.signal ? { signal: hooks.signal } : {}),
    });
    if (usage)
      hooks.emit({
        type: "model-call",
        purpose: "intent check",
        model: usage.model,
        usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens },
        ...(usage.cost !== undefined ? { cost: usage.cost } : {}),
      });
    cs.intent = opinion;
    try {
      // Only onto the same content: a record decided or replaced meanwhile is left as it is.
      const stored = this.runtime.store.load(cs.id);
      if (stored.digest !== cs.digest || stored.status !== "pending") return;
      stored.intent = opinion;
      this.runtime.store.save(stored);
    } catch {
      // An unreadable record is reported by the review that reads it; the opinion is still shown from memory.
    }
  }

  /**
   * Looks at how the current changeset was reviewed (the store is the truth: either
   * front end may have decided): decided files leave the overlay and the review is
   * saved; returns what the agent should be told. An undecided changeset stays staged.
   */
  private settleReview(): string[] {
    const previous = this.changeset;
    if (!previous || this.settledId === previous.id) return [];
    let stored: Changeset | null = null;
    try {
      stored = this.runtime.store.load(previous.id);
    } catch (error) {
      // The record is the only word on what was decided. Without it nothing is known to be decided: every staged file
      // stays staged, the person is told, and the next changeset gets a new id, so the unreadable record is never
      // written over (it may hold another front end's decisions).
      this.settledId = previous.id;
      this.continuesPending = false;
      const why = PencilError.isInstance(error) ? error.userMessage : (error as Error).message;
      this.sink.emit({
        type: "error",
        message: `The review record of changeset ${previous.id} could not be read (${why}). Its ${previous.files.length} staged file(s) stay staged and are saved as a new changeset to review; the old record is left as it is.`,
      });
      return [
        `Your staged changes (${previous.files.map((f) => f.path).join(", ")}) are still staged: the record of their review could not be read, so nothing is known to have been applied or rejected. They stay pending the user's review.`,
      ];
    }
    const decisions = stored?.decisions ?? {};
    if (stored && stored.status === "pending" && Object.keys(decisions).length === 0) {
      this.continuesPending = true;
      return [
        `Your staged changes (${previous.files.map((f) => f.path).join(", ")}) are still pending the user's review; they stay staged and you may keep working on them.`,
      ];
    }
    this.settledId = previous.id;
    const applied = stored?.applied ?? [];
    const rejected = Object.entries(decisions)
      .filter(([, d]) => d === "rejected")
      .map(([path]) => path);
    const decided = new Set(
      stored && stored.status === "pending" ? Object.keys(decisions) : previous.files.map((f) => f.path),
    );
    for (const file of previous.files) if (decided.has(file.path)) this.forgetFile(file, applied.includes(file.path));
    if (stored && stored.status === "pending") {
      stored.status = applied.length ? "partial" : "rejected";
      this.runtime.store.save(stored);
    }
    this.lastSettled = { id: previous.id, status: stored?.status ?? "pending", applied, rejected };
    this.continuesPending = false;
    this.saveReview(
      previous.id,
      applied,
      rejected.map((path) => ({ path, reason: "" })),
    );
    if (stored?.status === "discarded")
      return [
        `The user discarded your staged changes (${previous.files.map((f) => f.path).join(", ")}); none of them was applied.`,
      ];
    return [
      "The user reviewed your staged changes.",
      applied.length ? `Applied to disk: ${applied.join(", ")}.` : "Nothing was applied.",
      rejected.length ? `Rejected: ${rejected.join(", ")}.` : "",
    ].filter((l) => l !== "");
  }

  private closePending(id: string, status: "discarded"): void {
    try {
      const stored = this.runtime.store.load(id);
      if (stored.status !== "pending") return;
      stored.status = status;
      this.runtime.store.save(stored);
    } catch {
      // A damaged record stays as it is; review reports it.
    }
  }

  private saveTurn(messages: ModelMessage[]): void {
    this.trySave(() => this.session?.saveTurn(messages));
  }

  private saveReview(changeset: string, applied: string[], rejected: Rejection[]): void {
    this.trySave(() => this.session?.saveReview(changeset, applied, rejected, this.overlay));
  }

  /** A failed save must not end the run; it is said once, since a crash would now lose more. */
  private trySave(save: () => void): void {
    try {
      save();
    } catch (error) {
      if (this.saveWarned) return;
      this.saveWarned = true;
      this.sink.emit({
        type: "error",
        message: `Could not save the session (${(error as Error).message}); the run goes on, but a crash now would lose its steps.`,
      });
    }
  }

  /** A reviewed file leaves the overlay; an applied one counts as read in its new state (the agent wrote it, so it may edit it again). */
  private forgetFile(file: { real: string; path: string }, applied: boolean): void {
    this.overlay.discard(file.real);
    if (!applied) return;
    const st = statOrNull(file.real);
    if (st)
      this.reads.record(file.real, displayPath(this.runtime.ws, file.real), {
        size: st.size,
        mtimeMs: st.mtimeMs,
        hash: sha256(readFileSync(file.real)),
      });
  }

  /** After a review, reviewed files leave the overlay; applied ones count as read in their new state. */
  private forgetReviewed(previous: Changeset | null, applied?: ApplyResult): void {
    if (!previous) return;
    const appliedPaths = new Set(applied?.applied ?? []);
    for (const file of previous.files) this.forgetFile(file, appliedPaths.has(file.path));
    // The stored record is the truth (a front end may have applied a copy of it): only a still-pending one is closed.
    let stored: Changeset | null = null;
    try {
      stored = this.runtime.store.load(previous.id);
    } catch {
      // The files were reviewed here and the front end showed what it applied; an unreadable record is left as it is
      // (never written over), and the next review of it names it.
      stored = null;
    }
    if (stored && stored.status === "pending") {
      stored.status = stored.applied?.length ? "partial" : "rejected";
      this.runtime.store.save(stored);
    }
  }
}

function sessionStore(runtime: Runtime): SessionStore {
  return new SessionStore(runtime.pencilHome);
}

/** A saved conversation, checked message by message against the AI SDK's schema before the model sees it. */
function validMessages(messages: unknown[], id: string, alreadyChecked = 0): ModelMessage[] {
  // The first `alreadyChecked` are byte for byte what Pencil wrote at the end of a run (the log's digest says so).
  const parsed = z.array(modelMessageSchema).safeParse(messages.slice(alreadyChecked));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SessionFileError(
      `Session ${id}: message ${alreadyChecked + Number(issue?.path[0] ?? 0)} is not a valid model message (${issue?.message}). Its changeset, if saved, is still reviewable with pencil review; nothing was changed.`,
    );
  }
  return [...(messages.slice(0, alreadyChecked) as ModelMessage[]), ...parsed.data];
}

function readDiskOrNull(real: string): Uint8Array | null {
  try {
    return readFileSync(real);
  } catch {
    // Missing or unreadable: the changeset then has no "before" for it, and apply's own check reports the conflict.
    return null;
  }
}

function statOrNull(real: string) {
  try {
    return statSync(real);
  } catch {
    // Gone or unreadable since it was applied: it is not counted as read, so the agent reads it again before editing.
    return null;
  }
}
