import { CheckpointError } from "../core/errors/checkpoint-error.ts";
import type { Changeset } from "../core/staging/changeset.ts";
import { AgentRun } from "./agent-run.ts";
import type { Runtime } from "./runtime.ts";
import type { SavedSession } from "./saved-session.ts";
import type { Checkpoint } from "./session-replay.ts";

// Apart from app/checkpoints.ts: a rewind saves the session through its reopened run, which loads the agent's whole
// stack (the AI SDK and its providers, the tools), and `steps` and `fork`, which only read a session, need none of it.

/** What a rewind did: the checkpoint kept, and the changeset the staged work is now (null: nothing staged). */
export interface RewindResult {
  kept: Checkpoint;
  droppedCheckpoints: number;
  droppedMessages: number;
  changeset: Changeset | null;
}

/**
 * Takes a session's pending work back to checkpoint `n`: later staged changes and
 * later conversation are dropped; the pending changeset is rewritten to what was
 * staged at `n`. The next follow-up continues from there.
 */
export function rewindSession(runtime: Runtime, session: SavedSession, n: number): RewindResult {
  const before = session.state();
  const cps = before.checkpoints;
  const kept = cps.find((c) => c.n === n);
  if (!kept)
    throw new CheckpointError(
      cps.length === 0
        ? `Session ${session.id} has no checkpoints (no step staged anything).`
        : `No checkpoint ${n}: session ${session.id} has checkpoints 1–${cps.length}.`,
    );
  if (session.header.running) {
    throw new CheckpointError(
      `Session ${session.id} has a run going (pid ${session.header.running.pid}); stop it first.`,
    );
  }
  let after;
  try {
    after = session.rewind(n);
  } catch (error) {
    if (error instanceof RangeError) throw new CheckpointError(error.message);
    throw error;
  }
  const run = AgentRun.continueSession(runtime, session.id);
  const changeset = run.saveNow();
  return {
    kept,
    droppedCheckpoints: cps.length - after.checkpoints.length,
    droppedMessages: before.messages.length - after.messages.length,
    changeset,
  };
}
