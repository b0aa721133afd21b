import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ScriptedModel } from "../../../ai/scripted-model.ts";
import { createRuntime, type Runtime } from "../../../app/runtime.ts";
import { pencilHomeOf } from "../../../core/pencil-home.ts";
import { ChangesetStore } from "../../../core/staging/changeset-store.ts";
import { openGit } from "../../../core/git/run-git.ts";
import { renderFileDiff } from "../../../render/diff-view.ts";
import { formatSummary } from "../../../render/summary.ts";
import { DEMO_GOAL, DEMO_INTENT, DEMO_SCRIPT } from "../../../examples/demo-script.ts";
import { copyDemoWorkspace } from "../../../examples/demo-workspace.ts";
import { hint, type CliIO } from "../io.ts";
import type { CommandContext } from "../command-context.ts";
import { runWithProgress } from "../run-and-review.ts";
import { reviewLoop } from "../review-flow.ts";

/**
 * `pencil demo`: a scripted agent on a fresh copy of examples/demo, offline and
 * keyless. On a terminal the review applies what you approve in that copy; without
 * one it prints the summary and diffs, applies nothing, and exits 0. Either way it
 * ends with the next steps, its changesets go into your `pencil log` marked demo, and
 * its temporary folder is removed (however the demo ends) unless `--keep` is given.
 */
export async function run(ctx: CommandContext): Promise<number> {
  const { io } = ctx;
  const base = mkdtempSync(join(tmpdir(), "pencil-demo-"));
  const keep = ctx.args.keep;
  // A Ctrl-C mid-run exits the process from inside the run: the folder goes then too.
  const removeOnExit = () => rmSync(base, { recursive: true, force: true });
  if (!keep) process.once("exit", removeOnExit);
  let runtime: Runtime | null = null;
  try {
    const result = await demo(ctx, base);
    runtime = result.runtime;
    return result.code;
  } finally {
    process.off("exit", removeOnExit);
    if (runtime) recordInLog(ctx, runtime, !keep);
    if (keep) io.out(`\nThe demo's folder is kept: ${join(base, "tally")}\n`);
    else {
      removeOnExit();
      io.out(io.colors.dim(`\nThe demo's temporary folder is removed (${hint(io, "demo --keep")} keeps it).\n`));
    }
    nextSteps(io);
  }
}

async function demo(ctx: CommandContext, base: string): Promise<{ code: number; runtime: Runtime }> {
  const { io } = ctx;
  const c = io.colors;
  const workspace = join(base, "tally");
  copyDemoWorkspace(workspace);
  // A secret the agent must never see: the script tries to read it and is refused.
  writeFileSync(join(workspace, ".env"), "TALLY_API_TOKEN=demo-secret-that-must-not-leak\n");
  writeFileSync(join(workspace, ".gitignore"), ".env\n");
  const git = initGit(workspace);
  // The demo's own state and settings: none of yours (rules, MCP servers) apply to it.
  const runtime = createRuntime({ env: { ...ctx.env, PENCIL_HOME: join(base, "pencil-home") }, workspace });

  io.out(`${c.bold("Pencil demo")} — a scripted agent on a copy of examples/demo at ${workspace}\n`);
  io.out(`${c.dim("goal:")} ${DEMO_GOAL}\n\n`);
  const model = new ScriptedModel(DEMO_SCRIPT, { name: "demo", chunkChars: 12, structured: DEMO_INTENT });
  const { run, hooks } = await runWithProgress(io, runtime, "agent", DEMO_GOAL, {
    models: { model, labels: [model.label], current: () => model.label, contextWindow: 8192 },
  });
  const cs = run.changeset;
  if (!cs) {
    io.err("The demo staged nothing, which should not happen; please report it.\n");
    return { code: 1, runtime };
  }
  if (!io.interactive) {
    io.out(formatSummary(cs, { color: io.color }));
    for (const file of cs.files) io.out(`\n${renderFileDiff(file, { color: io.color }).text}\n`);
    io.out(
      `\nNothing was applied: there is no terminal to review on. Run ${c.bold("npm run demo")} (or ${hint(io, "demo")}) in a terminal to approve or reject each file.\n`,
    );
    return { code: 0, runtime };
  }
  const code = await reviewLoop(io, runtime, cs, run, hooks);
  io.out(`\nThe demo workspace is ${workspace}\n`);
  if (git) {
    const repo = openGit(workspace);
    const diff = repo.run(["-c", `color.ui=${io.color ? "always" : "never"}`, "diff", "--stat"]);
    const untracked = repo.run(["ls-files", "--others", "--exclude-standard"]);
    io.out(`${c.bold("git diff --stat")} there:\n${diff.out || "(no changes to tracked files)\n"}`);
    if (untracked.out.trim()) io.out(`new files: ${untracked.out.trim().split("\n").join(", ")}\n`);
    if (ctx.args.keep) io.out(`See everything with: cd ${workspace} && git status && git diff\n`);
  }
  return { code, runtime };
}

/**
 * Copies the demo's changesets into your own `$PENCIL_HOME`, marked demo, so `pencil
 * log` shows what the demo did. One still pending when its folder is removed can never
 * be applied: it is recorded as discarded.
 */
function recordInLog(ctx: CommandContext, runtime: Runtime, removed: boolean): void {
  try {
    const mine = new ChangesetStore(pencilHomeOf(ctx.env));
    for (const cs of runtime.store.list()) {
      // Its session lived in the demo's own state, which goes with the folder.
      const { session: _session, ...record } = cs;
      mine.save({
        ...record,
        demo: true,
        ...(removed && cs.status === "pending" ? { status: "discarded" as const } : {}),
      });
    }
  } catch (error) {
    ctx.io.err(`The demo's changesets could not be added to your log: ${(error as Error).message}\n`);
  }
}

/** Where to go from the demo: a model, doctor, a real run in your own repository. */
function nextSteps(io: CliIO): void {
  const c = io.colors;
  io.out(
    `\n${c.bold("Next steps")}\n` +
      `  1. Set a model key in ~/.pencil/.env: GROQ_API_KEY=… (or OPENROUTER_API_KEY=…, or LOCAL_LLM_BASE_URL + LOCAL_LLM_MODEL for Ollama)\n` +
      `  2. ${hint(io, "doctor")}    checks it, and everything else\n` +
      `  3. cd into your own repository and run ${hint(io, 'agent "add a --verbose flag"')}\n` +
      `  (${hint(io, "log")} shows this demo's changesets, marked demo)\n`,
  );
}

/** Makes the copy a git repository with one commit, so `git diff` shows what the review applied. */
function initGit(dir: string): boolean {
  const repo = openGit(dir);
  const run = (args: string[]) =>
    repo.run(["-c", "user.name=Pencil demo", "-c", "user.email=demo@pencil.invalid", ...args]).code;
  if (run(["init", "-q"]) !== 0) return false;
  return run(["add", "-A"]) === 0 && run(["commit", "-q", "--no-verify", "-m", "tally 0.3.0"]) === 0;
}
