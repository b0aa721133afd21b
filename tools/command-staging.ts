// What a command's file changes become: each staged in the overlay as the command's, or named with why it was not.
import { dirname, join } from "node:path";
import type { CommandRecord } from "../core/staging/command-record.ts";
import { compilePolicy, decide, type Policy } from "../core/policy/policy.ts";
import type { ScratchChange } from "../core/scratch/read-change.ts";
import type { Scratch } from "../core/scratch/types.ts";
import { realPathLoose } from "../core/workspace.ts";
import { originOf } from "./staging-helpers.ts";
import type { ToolContext } from "./tool.ts";

/** Changes listed at most, staged and not staged: the rest are counted. */
const LIST_CAP = 200;
export const NOT_STAGED_CAP = 30;

/**
 * The optional hook through which the session's policy judges writes; the
 * seam should set it (deny → the reason). Without it only the built-in denies
 * (.env, .git, .pencil, outside the workspace, secret directories) apply.
 */
type WriteRefusal = (real: string) => string | null;

/** What a command's file changes became: filled in by report. */
export interface Effects {
  staged: CommandRecord["staged"];
  notStaged: number;
  /** What the diff found; null when the command's effects were discarded (or could not be diffed). */
  changes: ScratchChange[] | null;
}

/** Stages what may be staged; returns the `Staged …` and `Not staged …` lines. */
export function stageChanges(
  s: Scratch,
  changes: ScratchChange[],
  ctx: ToolContext,
  pencilHome: string,
  effects: Effects,
): string[] {
  const staged: string[] = [];
  const refused: string[] = [];
  let gitChanges = 0;
  const ignored: string[] = [];
  const origin = originOf(ctx, "run_command");
  const refusalOf = writeJudge(ctx, pencilHome);
  // Deletions first, so a file replaced by a directory (or back) stages cleanly.
  const ordered = [...changes.filter((c) => c.change === "delete"), ...changes.filter((c) => c.change !== "delete")];
  for (const c of ordered) {
    if (c.rel === ".git" || c.rel.startsWith(".git/")) {
      gitChanges++;
      continue;
    }
    if (c.ignored) {
      ignored.push(c.rel);
      continue;
    }
    const real = join(s.ws.root, c.rel);
    // A link on disk above the path would carry the staged write elsewhere when applied.
    const why = parentLinked(real)
      ? "its parent is a symbolic link on disk."
      : whyNotStaged(s, c, real, ctx, refusalOf);
    if (why) {
      refused.push(`Not staged: ${c.rel}, because ${why}`);
      continue;
    }
    try {
      if (c.change === "delete") {
        if (ctx.fs.stat(real)?.kind !== "file") continue;
        ctx.fs.remove(real, { origin });
        staged.push(`Staged delete: ${c.rel}`);
        effects.staged.push({ path: c.rel, change: "delete" });
        continue;
      }
      const before = ctx.fs.stat(real);
      ctx.fs.writeBytes(real, c.bytes!, { mode: c.mode!, origin });
      effects.staged.push({ path: c.rel, change: before ? "edit" : "create" });
      if (!before) staged.push(`Staged create: ${c.rel}`);
      else if (before.mode !== c.mode)
        staged.push(`Staged edit: ${c.rel} (mode ${before.mode.toString(8)} → ${c.mode!.toString(8)})`);
      else staged.push(`Staged edit: ${c.rel}`);
    } catch (error) {
      refused.push(`Not staged: ${c.rel}, because ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  effects.notStaged = refused.length + gitChanges + ignored.length;
  const lines: string[] = [];
  if (staged.length === 0 && refused.length === 0 && gitChanges === 0 && ignored.length === 0)
    return ["No file changes."];
  lines.push(...staged.slice(0, LIST_CAP));
  if (staged.length > LIST_CAP) lines.push(`…and ${staged.length - LIST_CAP} more staged changes.`);
  lines.push(...refused.slice(0, NOT_STAGED_CAP));
  if (refused.length > NOT_STAGED_CAP) lines.push(`…and ${refused.length - NOT_STAGED_CAP} more changes not staged.`);
  if (gitChanges > 0) {
    lines.push(
      `Not staged: ${gitChanges} ${gitChanges === 1 ? "change" : "changes"} inside .git, because git metadata is never changed by commands (the user runs git operations).`,
    );
  }
  if (ignored.length > 0) {
    const dirs = [...new Set(ignored.map((rel) => rel.split("/").slice(0, 2).join("/")))].slice(0, 3);
    lines.push(
      `Not staged: ${ignored.length} ${ignored.length === 1 ? "change" : "changes"} in ignored files (dependencies, build output: ${dirs.join(", ")}${ignored.length > dirs.length ? ", …" : ""}); they stay in the scratch for this run's later commands, never on disk.`,
    );
  }
  return lines;
}

/** True when a directory above `real` is (or leads through) a symbolic link on disk, or cannot be resolved. */
function parentLinked(real: string): boolean {
  try {
    return realPathLoose(dirname(real)).real !== dirname(real);
  } catch {
    // Cannot resolve its directory: counted as linked, so the change is not staged through it (when in doubt, no).
    return true;
  }
}

function whyNotStaged(
  s: Scratch,
  c: ScratchChange,
  real: string,
  ctx: ToolContext,
  refusalOf: WriteRefusal,
): string | null {
  const shared = s.shared.find((sd) => c.rel === sd.rel || c.rel.startsWith(sd.rel + "/"));
  if (shared) return `it is inside ${shared.rel}, a dependency directory shared read-only with commands.`;
  const refusal = refusalOf(real);
  if (refusal) return refusal;
  if (!ctx.visible(real)) return "the policy keeps that path private.";
  if (c.entry === "link") return "symbolic links are not staged; create the file it should point to instead.";
  if (c.entry === "other") return "special files (sockets, FIFOs, devices) are not staged.";
  if (!s.rules.admitsPath(real, "file", s.ws.root)) return ".gitignore ignores it (build output or cache).";
  if (c.unread) return `${c.unread}.`;
  if (c.change !== "delete" && !c.bytes) {
    return c.size !== undefined && c.size > ctx.limits.maxFileBytes
      ? `it is ${c.size} bytes, over the ${ctx.limits.maxFileBytes}-byte limit per file.`
      : "its content could not be read back after the command ran.";
  }
  return null;
}

/**
 * The session's write judgement when the seam provides one, plus the built-in
 * denies, which always apply. Only deny refuses: a path under an Edit `ask`
 * rule is staged without a question, on purpose, because nothing staged
 * reaches the disk before the owner reviews and approves it in the diff.
 */
function writeJudge(ctx: ToolContext, pencilHome: string): WriteRefusal {
  const hook = ctx.writeRefusal?.bind(ctx);
  let builtins: Policy | null = null;
  return (real) => {
    const fromSession = typeof hook === "function" ? hook(real) : null;
    if (fromSession) return fromSession;
    builtins ??= builtinPolicy(ctx, pencilHome);
    const verdict = decide(builtins, { tool: "run_command", access: "write", real });
    return verdict.decision === "deny" ? verdict.reason : null;
  };
}

/** The policy with no rules: only the built-in denies that no settings file removes. */
export function builtinPolicy(ctx: ToolContext, pencilHome: string): Policy {
  return compilePolicy({ workspaceRoot: ctx.ws.root, home: ctx.ws.home, pencilHome, rules: [] });
}
