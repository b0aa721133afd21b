import type { ModelMessage } from "ai";
import type { EventSink } from "../agent/events.ts";
import type { RunMode } from "../agent/prompts.ts";
import type { ApplyResult } from "../core/apply/apply.ts";
import { PencilError } from "../core/errors/pencil-error.ts";
import { buildChangeset, type Changeset, newChangesetId } from "../core/staging/changeset.ts";
import { checkIntent } from "./intent-check.ts";
import type { ModelChoice } from "./model-choice.ts";
import { readDiskOrNull, type RunStaging } from "./run-staging.ts";
import type { Runtime } from "./runtime.ts";
import type { SessionKeeper } from "./session-keeper.ts";
import type { Rejection } from "./rejection.ts";

/** How a run's last changeset was settled, as its stored record says (by this front end or another). */
export interface SettledRecord {
  id: string;
  status: string;
  applied: string[];
  rejected: string[];
}

/**
 * A run's current changeset: made from what is staged (keeping its id while it is still pending with
 * nothing decided), and what its review became. Any front end may decide it, so the stored record is the
 * truth: `takeInReview` reads it back, lets decided files leave the staging and says what the agent is
 * told. It writes nothing to the workspace; only the changeset store and the session.
 */
export class RunChangeset {
  /** The changeset the run's staging was last saved as (null before anything was staged). */
  current: Changeset | null = null;
  /** How the last changeset settled from its stored record was decided (set by takeInReview; on reopening: elsewhere). */
  lastSettled: SettledRecord | null = null;
  /** True when the current changeset is still pending with nothing decided: the next snapshot keeps its id. */
  private continues = false;
  /** The changeset whose review was already taken into account. */
  private settledId: string | null = null;

  constructor(
    private readonly runtime: Runtime,
    private readonly run: { mode: RunMode; goal: string },
    private readonly staging: RunStaging,
    private readonly keeper: SessionKeeper,
    private readonly sink: { emit: EventSink },
  ) {}

  /** True when the current changeset is still pending with nothing decided: new staging joins it. */
  get continuesPending(): boolean {
    return this.continues;
  }

  /** Saves everything staged as the current changeset (null when nothing is). */
  saveStaged(turnGoal: string | null, messages: ModelMessage[]): Changeset | null {
    this.current = this.snapshot(turnGoal, messages);
    this.continues = this.current !== null;
    return this.current;
  }

  /**
   * Everything still staged, as a fresh changeset (null when nothing is). Saved as pending. It keeps the id of a
   * current changeset still pending with nothing decided (and what that one revised); else it revises the current one.
   */
  snapshot(turnGoal: string | null, messages: ModelMessage[]): Changeset | null {
    const staged = this.staging.overlay.list();
    if (staged.length === 0) {
      // Everything of a still-pending changeset was unstaged (a rewind): it is no longer there to review.
      if (this.continues && this.current)
        try {
          this.closeIfPending(this.runtime.store.load(this.current.id), "discarded");
        } catch {
          // A damaged record stays as it is; review reports it.
        }
      return null;
    }
    const keep = this.continues && this.current ? this.current.id : undefined;
    const goal = turnGoal ?? this.run.goal;
    const changeset = buildChangeset({
      id: keep ?? newChangesetId(),
      goal,
      workspace: this.runtime.ws,
      staged,
      readDisk: readDiskOrNull,
    });
    changeset.mode = this.run.mode;
    this.staging.stamp(changeset, staged);
    const revises = keep ? this.current?.revises : this.current?.id;
    if (revises) changeset.revises = revises;
    if (this.keeper.session) changeset.session = this.keeper.session.id;
    if (goal !== this.run.goal) changeset.sessionGoal = this.run.goal;
    // The intent opinion of exactly this content and goal is kept: the model is never asked twice about it.
    const opinion = this.current?.intent;
    if (opinion && opinion.digest === changeset.digest && opinion.goal === changeset.goal) changeset.intent = opinion;
    this.runtime.store.save(changeset);
    this.runtime.store.saveConversation(changeset.id, messages);
    return changeset;
  }

  /**
   * The intent check (review.intentCheck): one structured call asking the chat model whether
   * the new changeset's diff does what its goal asked, waited for review.intentSeconds at
   * most, before any front end shows the review. Its opinion (or why there is none) is saved
   * with the changeset, so every later view shows the same line without a second call.
   */
  async checkIntent(models: ModelChoice, hooks: { emit: EventSink; signal?: AbortSignal }): Promise<void> {
    const cs = this.current;
    const settings = this.runtime.settings.review;
    if (!cs || cs.intent || !settings.intentCheck || hooks.signal?.aborted) return;
    const { opinion, usage } = await checkIntent({
      changeset: cs,
      model: models.model,
      label: models.current(),
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
  takeInReview(): string[] {
    const previous = this.current;
    if (!previous || this.settledId === previous.id) return [];
    let stored: Changeset;
    try {
      stored = this.runtime.store.load(previous.id);
    } catch (error) {
      // The record is the only word on what was decided. Without it nothing is known to be decided: every staged file
      // stays staged, the person is told, and the next changeset gets a new id, so the unreadable record is never
      // written over (it may hold another front end's decisions).
      this.settledId = previous.id;
      this.continues = false;
      const why = PencilError.isInstance(error) ? error.userMessage : (error as Error).message;
      this.sink.emit({
        type: "error",
        message: `The review record of changeset ${previous.id} could not be read (${why}). Its ${previous.files.length} staged file(s) stay staged and are saved as a new changeset to review; the old record is left as it is.`,
      });
      return [
        `Your staged changes (${previous.files.map((f) => f.path).join(", ")}) are still staged: the record of their review could not be read, so nothing is known to have been applied or rejected. They stay pending the user's review.`,
      ];
    }
    const decisions = stored.decisions ?? {};
    if (stored.status === "pending" && Object.keys(decisions).length === 0) {
      this.continues = true;
      return [
        `Your staged changes (${previous.files.map((f) => f.path).join(", ")}) are still pending the user's review; they stay staged and you may keep working on them.`,
      ];
    }
    this.settledId = previous.id;
    const applied = stored.applied ?? [];
    const rejected = Object.entries(decisions)
      .filter(([, d]) => d === "rejected")
      .map(([path]) => path);
    const decided = new Set(stored.status === "pending" ? Object.keys(decisions) : previous.files.map((f) => f.path));
    for (const file of previous.files)
      if (decided.has(file.path)) this.staging.forget(file, applied.includes(file.path));
    this.closeIfPending(stored);
    this.lastSettled = { id: previous.id, status: stored.status, applied, rejected };
    this.continues = false;
    this.keeper.review(
      previous.id,
      applied,
      rejected.map((path) => ({ path, reason: "" })),
      this.staging.overlay,
    );
    if (stored.status === "discarded")
      return [
        `The user discarded your staged changes (${previous.files.map((f) => f.path).join(", ")}); none of them was applied.`,
      ];
    return [
      "The user reviewed your staged changes.",
      applied.length ? `Applied to disk: ${applied.join(", ")}.` : "Nothing was applied.",
      rejected.length ? `Rejected: ${rejected.join(", ")}.` : "",
    ].filter((l) => l !== "");
  }

  /**
   * The owner sent the current changeset back with reasons, here: its files leave the staging (applied ones
   * count as read in their new state), a still-pending record is closed, and the review is saved.
   */
  sentBack(rejections: Rejection[], applied?: ApplyResult): void {
    const previous = this.current;
    this.continues = false;
    if (!previous) return;
    const appliedPaths = new Set(applied?.applied ?? []);
    for (const file of previous.files) this.staging.forget(file, appliedPaths.has(file.path));
    // The stored record is the truth (a front end may have applied a copy of it): only a still-pending one is closed.
    let stored: Changeset | null = null;
    try {
      stored = this.runtime.store.load(previous.id);
    } catch {
      // The files were reviewed here and the front end showed what it applied; an unreadable record is left as it is
      // (never written over), and the next review of it names it.
    }
    if (stored) this.closeIfPending(stored);
    this.keeper.review(previous.id, applied?.applied ?? [], rejections, this.staging.overlay);
  }

  /**
   * A stored record still pending is closed as `status`; by default (its review taken in) partial when something
   * was applied, else rejected.
   */
  private closeIfPending(stored: Changeset, status?: "discarded"): void {
    if (stored.status !== "pending") return;
    stored.status = status ?? (stored.applied?.length ? "partial" : "rejected");
    this.runtime.store.save(stored);
  }
}
