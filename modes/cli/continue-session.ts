import type { RunMode } from "../../agent/prompts.ts";
import { AgentRun, type RunOptions } from "../../app/agent-run.ts";
import { processAlive } from "../../core/process-alive.ts";
import type { Runtime } from "../../app/runtime.ts";
import { SessionStore } from "../../app/session-store.ts";
import { visible } from "../../render/visible-text.ts";
import { SessionFileError } from "../../core/errors/session-file-error.ts";
import { UnknownSessionError } from "../../core/errors/unknown-session-error.ts";
import { UsageFailure } from "../../core/errors/usage-failure.ts";
import type { CommandContext } from "./command-context.ts";

/**
 * The session a new goal goes into: `--resume ID`, `-c` (the workspace's latest),
 * else the session of the workspace's pending changeset (so a second changeset
 * does not pile up silently), else none (a new session). Tells the owner which,
 * whether its last run was interrupted, and which staged files changed on disk since.
 */
export function continueSession(
  ctx: CommandContext,
  runtime: Runtime,
  options: RunOptions = {},
  mode: RunMode = "agent",
): AgentRun | null {
  const { io, args } = ctx;
  const store = new SessionStore(runtime.pencilHome);
  let id: string | undefined;
  let why = "";
  if (args.resume !== undefined) {
    try {
      id = store.resolveId(args.resume);
    } catch (error) {
      if (!UnknownSessionError.isInstance(error)) throw error;
      const known = store
        .listFor(runtime.ws.root)
        .map((h) => `  ${h.id}  ${visible(h.goal.split("\n", 1)[0]!.slice(0, 70))}`);
      throw new UsageFailure(
        `${error.message} ${known.length ? `Sessions of ${runtime.ws.root}:\n${known.join("\n")}` : `${runtime.ws.root} has no sessions yet.`}`,
      );
    }
    why = "Resuming";
  } else if (args.continue) {
    const latest = store.listFor(runtime.ws.root)[0];
    if (!latest)
      throw new UsageFailure(`No session to continue in ${runtime.ws.root}: start one with pencil agent "<goal>".`);
    id = latest.id;
    why = "Continuing";
  } else if (mode === "agent") {
    const pending = runtime.store.latestPending(runtime.ws.root);
    if (pending?.session && store.has(pending.session)) {
      id = pending.session;
      why = `Changeset ${pending.id} (${pending.files.length} file${pending.files.length === 1 ? "" : "s"}) is still pending, so this goal continues its session`;
    }
  }
  if (!id) return null;
  let header;
  let run: AgentRun;
  try {
    header = store.header(id);
    run = AgentRun.continueSession(runtime, id, options, mode);
  } catch (error) {
    // Asked for by name: say why it cannot go on. Chosen by default: start afresh instead, saying so.
    if (args.resume !== undefined || args.continue || !SessionFileError.isInstance(error)) throw error;
    io.err(`${io.colors.yellow("warning:")} ${error.message}\nStarting a new session instead.\n`);
    return null;
  }
  const interrupted = header.running && !processAlive(header.running.pid);
  const c = io.colors;
  io.err(
    `${c.cyan(why)} session ${id} — ${visible(header.goal.split("\n", 1)[0]!.slice(0, 100))} (${run.messages.length} messages, ${run.overlay.list().length} staged file(s))\n`,
  );
  if (why.startsWith("Changeset"))
    io.err(c.dim(`  (to start afresh instead: pencil review, or pencil discard ${run.changeset?.id ?? ""})\n`));
  if (interrupted)
    io.err(c.yellow(`  Its last run was interrupted (the process ended mid-run); the steps it finished are kept.\n`));
  const settled = run.lastSettled;
  if (settled) {
    const parts = [
      settled.applied.length ? `applied ${settled.applied.map(visible).join(", ")}` : "",
      settled.rejected.length ? `rejected ${settled.rejected.map(visible).join(", ")}` : "",
    ].filter(Boolean);
    io.err(
      c.dim(
        `  Its changeset ${settled.id} was ${settled.status === "discarded" ? "discarded" : "reviewed"} since${parts.length ? `: ${parts.join("; ")}` : ""}. This goal starts a changeset of its own.
`,
      ),
    );
  }
  const changed = run.changedOnDisk();
  if (changed.length > 0) {
    io.err(
      c.yellow(
        `  Changed on disk since they were staged (your edits, or applied elsewhere): ${changed.map(visible).join(", ")}\n`,
      ),
    );
    run.noteForNextTurn(
      `These staged files changed on disk since you staged them (the user's edits or another front end's apply): ${changed.join(", ")}. Read them again before changing them further; applying the old staged versions would be refused as conflicts.`,
    );
  }
  return run;
}
