import type { AgentRun } from "../../app/agent-run.ts";

/** Changesets whose agent is kept for a revision (older ones can no longer be sent back). */
const LIVE_RUNS = 4;

/** The runs that can still revise a changeset, by changeset id: the newest LIVE_RUNS, each under its latest changeset only. */
export class LiveRuns {
  private readonly live = new Map<string, AgentRun>();

  /** Runs kept for revision. */
  get size(): number {
    return this.live.size;
  }

  /** The run that can still revise a changeset, if any. */
  get(changesetId: string): AgentRun | undefined {
    return this.live.get(changesetId);
  }

  /** Keeps `run` as the one that revises changeset `id` (and no other). */
  keep(id: string, run: AgentRun): void {
    for (const [other, r] of this.live) if (r === run) this.live.delete(other);
    this.live.set(id, run);
    while (this.live.size > LIVE_RUNS) this.live.delete(this.live.keys().next().value!);
  }

  /** The changeset was settled: its run can no longer be sent anything for it. */
  delete(changesetId: string): void {
    this.live.delete(changesetId);
  }
}
