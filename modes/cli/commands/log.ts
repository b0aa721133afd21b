import { hint } from "../io.ts";
import { wrapText } from "../../../render/wrap.ts";
import { commandRecordLine } from "../../../core/staging/command-record.ts";
import { intentLine } from "../../../render/intent-line.ts";
import { visible } from "../../../render/visible-text.ts";
import type { CommandContext } from "../command-context.ts";
import { processAlive } from "../../../core/process-alive.ts";
import type { Runtime } from "../../../app/runtime.ts";
import { SavedSession } from "../../../app/saved-session.ts";
import { type RunRecord, SessionStore } from "../../../app/session-store.ts";
import { openRuntime } from "../open-runtime.ts";

/** `pencil log [--json]`: changesets, newest first: id, time, goal, model, status, files. */
export async function run(ctx: CommandContext): Promise<number> {
  const runtime = openRuntime(ctx);
  const { io } = ctx;
  if (ctx.args.runs) return listRuns(ctx, runtime);
  const changesets = runtime.store.list((file, error) => io.err(`skipped ${file}: ${error.message}\n`));
  const rows = changesets.map((cs) => ({
    id: cs.id,
    time: cs.createdAt,
    goal: cs.goal,
    models: cs.models,
    status: cs.status,
    workspace: cs.workspace,
    session: cs.session ?? null,
    // Made by `pencil demo` on a temporary copy of examples/demo.
    demo: cs.demo === true,
    sessionGoal: cs.sessionGoal ?? null,
    // The model's opinion recorded with the changeset (review.intentCheck), worded as the review shows it.
    intent: cs.intent ? intentLine(cs.intent) : null,
    // A conflicted file was approved but never written: it says conflict, not approved, until it is decided again.
    files: cs.files.map((f) => ({
      path: f.path,
      kind: f.kind,
      added: f.added,
      removed: f.removed,
      models: f.models,
      decision: cs.decisions?.[f.path] ?? (cs.conflicts?.includes(f.path) ? "conflict" : null),
    })),
    commands: cs.commands ?? [],
  }));
  if (ctx.args.json) {
    io.out(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  const sessions = workspaceSessions(ctx, runtime);
  const idle = runsOf(sessions.headers).filter((r) => r.changeset === null);
  if (rows.length === 0 && idle.length === 0) {
    io.out(`No changesets yet under ${runtime.store.dir}. Try: ${hint(io, "demo")}\n`);
    return 0;
  }
  const c = io.colors;
  printSessions(ctx, runtime, sessions);
  if (rows.length) io.out(`${c.bold("Changesets")}, newest first:\n`);
  for (const row of rows) {
    io.out(
      `${c.bold(row.id)}  ${row.time.replace("T", " ").slice(0, 19)}  ${statusColor(io, row.status)}${row.demo ? `  ${c.magenta("[demo]")}` : ""}  ${c.dim(row.models.join(", ") || "-")}\n`,
    );
    io.out(
      `${wrapText(`  ${row.goal.split("\n", 1)[0]!.slice(0, 200)}`, io.columns, "  ")}${row.session ? c.dim(`  (session ${row.session})`) : ""}\n`,
    );
    if (row.intent) io.out(`${c.dim(wrapText(`  ${visible(row.intent)}`, io.columns, "    "))}\n`);
    for (const f of row.files) {
      io.out(
        `  ${c.dim("·")} ${f.path} ${c.green(`+${f.added}`)} ${c.red(`-${f.removed}`)}${f.decision ? ` ${f.decision === "conflict" ? c.red(f.decision) : c.dim(f.decision)}` : ""}${f.models.length ? ` ${c.dim(f.models.join(", "))}` : ""}\n`,
      );
    }
    for (const r of row.commands) io.out(`  ${c.dim(visible(commandRecordLine(r)))}\n`);
  }
  if (idle.length > 0) {
    io.out(`${c.bold("Runs that staged nothing")}, newest first (all runs: ${hint(io, "log --runs")}):\n`);
    for (const r of idle.slice(0, 10)) printRun(io, r);
    if (idle.length > 10) io.out(c.dim(`  … ${idle.length - 10} more\n`));
  }
  return 0;
}

/** A run of one of the workspace's sessions, with the session it belongs to. */
type SessionRun = RunRecord & { session: string };

/** The workspace's sessions, read once (a damaged one is said once, on stderr). */
function workspaceSessions(ctx: CommandContext, runtime: Runtime) {
  const store = new SessionStore(runtime.pencilHome);
  const headers = store.listFor(runtime.ws.root, (id, error) => ctx.io.err(`session ${id}: ${error.message}\n`));
  return { store, headers };
}

/** Every run the sessions recorded, newest first. */
function runsOf(headers: ReturnType<typeof workspaceSessions>["headers"]): SessionRun[] {
  return headers
    .flatMap((h) => (h.runs ?? []).map((r) => ({ ...r, session: h.id })))
    .sort((a, b) => b.startedAt.localeCompare(a.startedAt));
}

/** `pencil log --runs`: every run, newest first, with what it ran and where its staging went. */
function listRuns(ctx: CommandContext, runtime: Runtime): number {
  const { io } = ctx;
  const runs = runsOf(workspaceSessions(ctx, runtime).headers);
  if (ctx.args.json) {
    const rows = runs.map((r) => ({
      session: r.session,
      goal: r.goal,
      mode: r.mode,
      startedAt: r.startedAt,
      endedAt: r.endedAt,
      changeset: r.changeset,
      commands: r.commands.map((c) => ({
        command: c.command,
        outcome: c.outcome,
        exitCode: c.exitCode,
        durationMs: c.durationMs,
      })),
      ...(r.moreCommands ? { moreCommands: r.moreCommands } : {}),
    }));
    io.out(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  if (runs.length === 0) {
    io.out(`No runs yet in ${runtime.ws.root}. Try: ${hint(io, "demo")}\n`);
    return 0;
  }
  io.out(`${io.colors.bold("Runs")} of ${runtime.ws.root}, newest first:\n`);
  for (const r of runs) printRun(io, r);
  return 0;
}

function printRun(io: CommandContext["io"], r: SessionRun): void {
  const c = io.colors;
  const where = r.changeset ? `changeset ${r.changeset}` : "staged nothing";
  io.out(
    `${r.startedAt.replace("T", " ").slice(0, 19)}  ${r.mode}  ${c.dim(`session ${r.session} · ${where}`)}\n${wrapText(`  ${visible(r.goal.split("\n", 1)[0]!.slice(0, 200))}`, io.columns, "  ")}\n`,
  );
  for (const command of r.commands) io.out(`  ${c.dim(visible(commandRecordLine(command)))}\n`);
  if (r.moreCommands) io.out(c.dim(`  … ${r.moreCommands} more command(s)\n`));
}

function statusColor(io: CommandContext["io"], status: string): string {
  const c = io.colors;
  return status === "applied"
    ? c.green(status)
    : status === "pending"
      ? c.yellow(status)
      : status === "partial"
        ? c.cyan(status)
        : c.dim(status);
}

/** The workspace's sessions, most recently active first: goal, checkpoints, current changeset, and whether a run is going or was interrupted. */
function printSessions(
  ctx: CommandContext,
  runtime: Runtime,
  { store, headers }: ReturnType<typeof workspaceSessions>,
): void {
  const { io } = ctx;
  const c = io.colors;
  if (headers.length === 0) return;
  io.out(
    `${c.bold("Sessions")} of ${runtime.ws.root}, latest first (continue one: pencil agent -c "…" or --resume ID):\n`,
  );
  for (const h of headers.slice(0, 10)) {
    let checkpoints = "?";
    try {
      checkpoints = String(SavedSession.open(store, h.id).checkpoints().length);
    } catch (error) {
      checkpoints = c.red(`damaged: ${(error as Error).message}`);
    }
    const state = h.running ? (processAlive(h.running.pid) ? c.cyan(" running") : c.red(" interrupted")) : "";
    io.out(
      `${c.bold(h.id)}  ${h.mode}${state}  ${checkpoints} checkpoint(s)${h.changeset ? `  changeset ${h.changeset}` : ""}\n  ${h.goal.split("\n", 1)[0]!.slice(0, 100)}\n`,
    );
  }
  if (headers.length > 10) io.out(c.dim(`  … ${headers.length - 10} older session(s)\n`));
  io.out("\n");
}
