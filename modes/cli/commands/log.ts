import { hint } from "../io.ts";
import { wrapText } from "../../../render/wrap.ts";
import { commandRecordLine } from "../../../core/command-record.ts";
import { visible } from "../../../render/visible-text.ts";
import type { CommandContext } from "../main.ts";
import { processAlive } from "../../../app/interrupted-runs.ts";
import type { Runtime } from "../../../app/runtime.ts";
import { SavedSession } from "../../../app/saved-session.ts";
import { SessionStore } from "../../../app/session-store.ts";
import { openRuntime } from "../open-runtime.ts";

/** `pencil log [--json]`: changesets, newest first: id, time, goal, model, status, files. */
export async function run(ctx: CommandContext): Promise<number> {
  const runtime = openRuntime(ctx);
  const { io } = ctx;
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
  if (rows.length === 0) {
    io.out(`No changesets yet under ${runtime.store.dir}. Try: ${hint(io, "demo")}\n`);
    return 0;
  }
  const c = io.colors;
  printSessions(ctx, runtime);
  if (rows.length) io.out(`${c.bold("Changesets")}, newest first:\n`);
  for (const row of rows) {
    io.out(
      `${c.bold(row.id)}  ${row.time.replace("T", " ").slice(0, 19)}  ${statusColor(io, row.status)}${row.demo ? `  ${c.magenta("[demo]")}` : ""}  ${c.dim(row.models.join(", ") || "-")}\n`,
    );
    io.out(
      `${wrapText(`  ${row.goal.split("\n", 1)[0]!.slice(0, 200)}`, io.columns, "  ")}${row.session ? c.dim(`  (session ${row.session})`) : ""}\n`,
    );
    for (const f of row.files) {
      io.out(
        `  ${c.dim("·")} ${f.path} ${c.green(`+${f.added}`)} ${c.red(`-${f.removed}`)}${f.decision ? ` ${f.decision === "conflict" ? c.red(f.decision) : c.dim(f.decision)}` : ""}${f.models.length ? ` ${c.dim(f.models.join(", "))}` : ""}\n`,
      );
    }
    for (const r of row.commands) io.out(`  ${c.dim(visible(commandRecordLine(r)))}\n`);
  }
  return 0;
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
function printSessions(ctx: CommandContext, runtime: Runtime): void {
  const { io } = ctx;
  const c = io.colors;
  const store = new SessionStore(runtime.pencilHome);
  const headers = store.listFor(runtime.ws.root, (id, error) => io.err(`session ${id}: ${error.message}\n`));
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
