import { CheckpointError } from "../core/errors/checkpoint-error.ts";
import type { Changeset } from "../core/staging/changeset.ts";
import { AgentRun } from "./agent-run.ts";
import type { Runtime } from "./runtime.ts";

/** Removes a pending changeset from review (status `discarded`); its session forgets its staged files. */
export function discardChangeset(runtime: Runtime, cs: Changeset): void {
  if (cs.status !== "pending")
    throw new CheckpointError(`Changeset ${cs.id} is ${cs.status}, not pending; there is nothing to discard.`);
  cs.status = "discarded";
  runtime.store.save(cs);
  if (!cs.session) return;
  try {
    const run = AgentRun.continueSession(runtime, cs.session);
    // The session takes the discard in as a review: its files leave the overlay, and the agent is told at the next turn.
    run.saveNow();
  } catch {
    // A damaged session stays as it is; the changeset is discarded all the same.
  }
}
