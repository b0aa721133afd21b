import { hint } from "../io.ts";
import { wrapText } from "../../../render/wrap.ts";
import { commandRecordLine } from "../../../core/command-record.ts";
import { visible } from "../../../render/visible-text.ts";
import type { CommandContext } from "../main.ts";
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
    // A conflicted file was approved but never written: it says conflict, not approved, until it is decided again.
    files: cs.files.map((f) => ({ path: f.path, kind: f.kind, added: f.added, removed: f.removed, models: f.models, decision: cs.decisions?.[f.path] ?? (cs.conflicts?.includes(f.path) ? "conflict" : null) })),
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
  for (const row of rows) {
    io.out(`${c.bold(row.id)}  ${row.time.replace("T", " ").slice(0, 19)}  ${statusColor(io, row.status)}  ${c.dim(row.models.join(", ") || "-")}\n`);
    io.out(`${wrapText(`  ${row.goal.split("\n", 1)[0]!.slice(0, 200)}`, io.columns, "  ")}\n`);
    for (const f of row.files) {
      io.out(`  ${c.dim("·")} ${f.path} ${c.green(`+${f.added}`)} ${c.red(`-${f.removed}`)}${f.decision ? ` ${f.decision === "conflict" ? c.red(f.decision) : c.dim(f.decision)}` : ""}${f.models.length ? ` ${c.dim(f.models.join(", "))}` : ""}\n`);
    }
    for (const r of row.commands) io.out(`  ${c.dim(visible(commandRecordLine(r)))}\n`);
  }
  return 0;
}

function statusColor(io: CommandContext["io"], status: string): string {
  const c = io.colors;
  return status === "applied" ? c.green(status) : status === "pending" ? c.yellow(status) : status === "partial" ? c.cyan(status) : c.dim(status);
}
