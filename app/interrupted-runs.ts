import { processAlive } from "../core/process-alive.ts";
import type { Changeset } from "../core/staging/changeset.ts";
import type { Runtime } from "./runtime.ts";
import { SessionStore, type SessionHeader } from "./session-store.ts";

/** A run that was going when its process died (kill -9, crash, power loss), as found in its session. */
export interface InterruptedRun {
  session: SessionHeader;
  /** The pending changeset its staged work was saved as; null when it had staged nothing. */
  changeset: Changeset | null;
  /** Steps whose work was kept (checkpoints). */
  checkpoints: number;
}

/** Sessions of the workspace whose running mark outlived its process. */
function findInterrupted(runtime: Runtime): SessionHeader[] {
  return new SessionStore(runtime.pencilHome)
    .listFor(runtime.ws.root)
    .filter((h) => h.running && !processAlive(h.running.pid));
}

/**
 * Settles every interrupted run of the workspace: what it staged up to its last
 * finished step becomes a pending changeset (for review like any other), and the
 * running mark is cleared, so each is reported once. Damaged sessions are skipped
 * and reported through `onBad`.
 */
export async function recoverInterrupted(
  runtime: Runtime,
  onBad?: (id: string, error: Error) => void,
): Promise<InterruptedRun[]> {
  const out: InterruptedRun[] = [];
  const interrupted = findInterrupted(runtime);
  if (interrupted.length === 0) return out;
  // Reopening a run loads the agent's stack (the AI SDK, its providers, the tools): only when there is one to settle.
  const { AgentRun } = await import("./agent-run.ts");
  for (const header of interrupted) {
    try {
      const run = AgentRun.continueSession(runtime, header.id);
      const changeset = run.saveNow();
      out.push({ session: header, changeset, checkpoints: run.session?.checkpoints().length ?? 0 });
    } catch (error) {
      onBad?.(header.id, error as Error);
    }
  }
  return out;
}
