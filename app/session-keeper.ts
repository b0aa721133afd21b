import type { ModelMessage } from "ai";
import type { EventSink } from "../agent/events.ts";
import type { CommandRecord } from "../core/staging/command-record.ts";
import type { Overlay } from "../core/staging/overlay.ts";
import type { Workspace } from "../core/workspace.ts";
import type { SavedSession } from "./saved-session.ts";
import type { RunningMark, RunRecord } from "./session-store.ts";

/** The start of a run's record: what the owner asked, in which mode, when, and how many commands the run had before. */
export interface RunStarted extends Pick<RunRecord, "goal" | "mode" | "startedAt"> {
  commandsBefore: number;
}

/** Starts the record of a run that `commands` (the AgentRun's so far) do not belong to. */
export function startRun(goal: string, mode: string, commands: readonly CommandRecord[]): RunStarted {
  return { goal, mode, startedAt: new Date().toISOString(), commandsBefore: commands.length };
}

/**
 * Keeps a run's saved session in step with it: every write goes through here, and a failed
 * one never ends the run. It is said once (a crash would now lose more), then the run goes on.
 * With no session (a damaged one reopened read-only) every save is skipped.
 */
export class SessionKeeper {
  private warned = false;

  constructor(
    /** The saved session the run lives in; null when saving is impossible. */
    public session: SavedSession | null,
    private readonly sink: { emit: EventSink },
  ) {}

  /** User messages: a goal, a follow-up, reasons. */
  turn(messages: ModelMessage[]): void {
    this.save((s) => s.saveTurn(messages));
  }

  /** A model step: the messages not saved yet and the staged files that changed. */
  step(messages: readonly ModelMessage[], overlay: Overlay, ws: Workspace, model?: string): void {
    this.save((s) => s.saveStep(messages, overlay, ws, model));
  }

  /** A review: what was applied, what was rejected and why, and the files that left the overlay. */
  review(changeset: string, applied: string[], rejected: { path: string; reason: string }[], overlay: Overlay): void {
    this.save((s) => s.saveReview(changeset, applied, rejected, overlay));
  }

  /** The running mark, kept until `finish` (a kill -9 leaves it, which is how an interrupted run is found). */
  running(mark: Omit<RunningMark, "pid" | "startedAt">): void {
    this.save((s) => s.markRunning(mark));
  }

  /** Ends the running mark, naming the session's current changeset (a run saved before its end is recorded by none). */
  finish(changeset: string | null): void {
    this.save((s) => s.finishRun(changeset));
  }

  /** Ends the running mark like `finish`, recording the run `started` with the commands it added; its record. */
  finishRun(started: RunStarted, changeset: string | null, commands: readonly CommandRecord[]): RunRecord {
    const { commandsBefore, ...run } = started;
    const record = { ...run, endedAt: new Date().toISOString(), changeset, commands: commands.slice(commandsBefore) };
    this.save((s) => s.finishRun(changeset, record));
    return record;
  }

  private save(write: (session: SavedSession) => void): void {
    if (!this.session) return;
    try {
      write(this.session);
    } catch (error) {
      if (this.warned) return;
      this.warned = true;
      this.sink.emit({
        type: "error",
        message: `Could not save the session (${(error as Error).message}); the run goes on, but a crash now would lose its steps.`,
      });
    }
  }
}
