import { constants } from "node:os";
import { endTrackedProcesses } from "../core/sandbox/live-processes.ts";

/** What a stopped Pencil saves before it exits: a run's session and changeset (AgentRun.saveNow). */
export type StopSaver = () => void;

const savers = new Set<StopSaver>();

/** Registers `save` to run when Pencil is stopped by a signal, until the returned function is called. */
export function onStop(save: StopSaver): () => void {
  savers.add(save);
  return () => savers.delete(save);
}

/** The signals that stop Pencil: what `timeout`, systemd and a CI cancel send (TERM), a closed terminal (HUP), Ctrl-C (INT). */
export type StopSignal = "SIGTERM" | "SIGHUP" | "SIGINT";

/**
 * Stops Pencil now, as `signal` asks: ends every sandboxed command and MCP server it started (their whole
 * namespaces, waited for), saves what the registered savers save, says so on `say`, and exits with 128 + the
 * signal's number; the exit removes every scratch directory (core/scratch/live.ts). Never returns.
 */
export function stopNow(signal: StopSignal, say: (text: string) => void = () => {}): never {
  const ended = endTrackedProcesses();
  let saved = true;
  for (const save of savers) {
    try {
      save();
    } catch {
      // The stop goes on: a session that cannot be saved must not keep its commands running; said below.
      saved = false;
    }
  }
  say(
    `\nPencil stopped (${signal})${ended > 0 ? `: ${ended} command and server process${ended === 1 ? "" : "es"} ended` : ""}${savers.size > 0 ? (saved ? "; the session is saved" : "; the session could NOT be saved completely") : ""}.\n`,
  );
  process.exit(128 + (constants.signals[signal] ?? 0));
}

/**
 * Installs the stop for each of `signals` (default TERM and HUP; INT too where no terminal's Ctrl-C has its own
 * meaning); returns the function that removes them.
 */
export function installStopHandlers(
  signals: readonly StopSignal[] = ["SIGTERM", "SIGHUP"],
  say?: (text: string) => void,
): () => void {
  const handlers = signals.map((signal) => {
    const handler = () => stopNow(signal, say);
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
}
