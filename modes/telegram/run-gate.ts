import { randomBytes } from "node:crypto";

/** The run going on in the workspace: what it is, since when, and how to stop it. */
export interface ActiveRun {
  id: string;
  kind: "agent" | "plan" | "ask" | "revise";
  goal: string;
  startedAt: number;
  controller: AbortController;
}

/** One run at a time per workspace: a second start is refused while one is active. */
export class RunGate {
  private current: ActiveRun | null = null;

  /** The active run, if any. */
  get active(): ActiveRun | null {
    return this.current;
  }

  /** Takes the gate for a new run; null when a run is already active. */
  tryBegin(kind: ActiveRun["kind"], goal: string): ActiveRun | null {
    if (this.current) return null;
    this.current = {
      id: randomBytes(6).toString("hex"),
      kind,
      goal,
      startedAt: Date.now(),
      controller: new AbortController(),
    };
    return this.current;
  }

  /** Releases the gate held by `run` (a no-op for any other run). */
  end(run: ActiveRun): void {
    if (this.current === run) this.current = null;
  }
}
