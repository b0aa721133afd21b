import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ScriptedModel } from "../../../ai/scripted-model.ts";
import { createRuntime } from "../../../app/runtime.ts";
import { openGit } from "../../../core/git/run-git.ts";
import { renderFileDiff } from "../../../render/diff-view.ts";
import { formatSummary } from "../../../render/summary.ts";
import { DEMO_GOAL, DEMO_SCRIPT } from "../../../examples/demo-script.ts";
import { copyDemoWorkspace } from "../../../examples/demo-workspace.ts";
import type { CommandContext } from "../main.ts";
import { runWithProgress } from "../run-and-review.ts";
import { reviewLoop } from "../review-flow.ts";

/**
 * `pencil demo`: a scripted agent on a fresh copy of examples/demo, offline and
 * keyless. On a terminal the review applies what you approve in that copy; without
 * one it prints the summary and diffs, applies nothing, and exits 0.
 */
export async function run(ctx: CommandContext): Promise<number> {
  const { io } = ctx;
  const c = io.colors;
  const base = mkdtempSync(join(tmpdir(), "pencil-demo-"));
  const workspace = join(base, "tally");
  copyDemoWorkspace(workspace);
  // A secret the agent must never see: the script tries to read it and is refused.
  writeFileSync(join(workspace, ".env"), "TALLY_API_TOKEN=demo-secret-that-must-not-leak\n");
  writeFileSync(join(workspace, ".gitignore"), ".env\n");
  const git = initGit(workspace);
  const runtime = createRuntime({ env: { ...ctx.env, PENCIL_HOME: join(base, "pencil-home") }, workspace });

  io.out(`${c.bold("Pencil demo")} — a scripted agent on a copy of examples/demo at ${workspace}\n`);
  io.out(`${c.dim("goal:")} ${DEMO_GOAL}\n\n`);
  const model = new ScriptedModel(DEMO_SCRIPT, { name: "demo", chunkChars: 12 });
  const { run, hooks } = await runWithProgress(io, runtime, "agent", DEMO_GOAL, {
    models: { model, labels: [model.label], current: () => model.label, contextWindow: 8192 },
  });
  const cs = run.changeset;
  if (!cs) {
    io.err("The demo staged nothing, which should not happen; please report it.\n");
    return 1;
  }
  if (!io.interactive) {
    io.out(formatSummary(cs, { color: io.color }));
    for (const file of cs.files) io.out(`\n${renderFileDiff(file, { color: io.color }).text}\n`);
    io.out(
      `\nNothing was applied: there is no terminal to review on. Run ${c.bold("npm run demo")} (or ./bin/pencil demo) in a terminal to approve or reject each file.\n`,
    );
    return 0;
  }
  const code = await reviewLoop(io, runtime, cs, run, hooks);
  io.out(`\nThe demo workspace is ${workspace}\n`);
  if (git) {
    const repo = openGit(workspace);
    const diff = repo.run(["-c", `color.ui=${io.color ? "always" : "never"}`, "diff", "--stat"]);
    const untracked = repo.run(["ls-files", "--others", "--exclude-standard"]);
    io.out(`${c.bold("git diff --stat")} there:\n${diff.out || "(no changes to tracked files)\n"}`);
    if (untracked.out.trim()) io.out(`new files: ${untracked.out.trim().split("\n").join(", ")}\n`);
    io.out(`See everything with: cd ${workspace} && git status && git diff\n`);
  }
  return code;
}

/** Makes the copy a git repository with one commit, so `git diff` shows what the review applied. */
function initGit(dir: string): boolean {
  const repo = openGit(dir);
  const run = (args: string[]) =>
    repo.run(["-c", "user.name=Pencil demo", "-c", "user.email=demo@pencil.invalid", ...args]).code;
  if (run(["init", "-q"]) !== 0) return false;
  return run(["add", "-A"]) === 0 && run(["commit", "-q", "--no-verify", "-m", "tally 0.3.0"]) === 0;
}
