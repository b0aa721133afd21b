import { spawnSync } from "node:child_process";
import type { Changeset } from "../core/changeset.ts";

/** The git repository a workspace is in, as the review shows it; null outside git. */
export interface GitState {
  /** The current branch, or `HEAD detached at <sha>`; `(no commits yet)` on an unborn branch. */
  branch: string;
  /** True when `git status` shows nothing (untracked files included). */
  clean: boolean;
  /** How many paths `git status` lists. */
  changes: number;
}

/** What `commitApplied` did: the commit, or why there is none. */
export type CommitResult =
  | { ok: true; sha: string; branch: string; files: string[]; skipped: { path: string; reason: string }[] }
  | { ok: false; reason: string };

/** Most bytes of the model's summary kept in a commit message body. */
const MAX_SUMMARY_CHARS = 2000;

// Hooks are turned off: a pre-commit hook that formats or adds files would put into the
// commit what the owner did not approve. Pathspecs are literal: a file named `:(glob)*`
// is that file. No pager, no prompts, no colours.
const GIT_FLAGS = [
  "--no-pager",
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "color.ui=false",
  "-c",
  "commit.gpgSign=false",
];

function git(cwd: string, args: string[], input?: string): { code: number; out: string; err: string } {
  // check-ignore reads plain paths from stdin and refuses the literal-pathspecs switch.
  const literal = args[0] === "check-ignore" ? [] : ["--literal-pathspecs"];
  const env = { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" };
  const run = spawnSync("git", [...literal, ...GIT_FLAGS, ...args], {
    cwd,
    env,
    input,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error) return { code: 127, out: "", err: (run.error as Error).message };
  return { code: run.status ?? 1, out: run.stdout ?? "", err: (run.stderr ?? "").trim() };
}

/** The branch and cleanliness of the repository `dir` is in; null when it is not in one (or git is missing). */
export function gitState(dir: string): GitState | null {
  const inside = git(dir, ["rev-parse", "--is-inside-work-tree"]);
  if (inside.code !== 0 || inside.out.trim() !== "true") return null;
  const status = git(dir, ["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
  if (status.code !== 0) return null;
  const changes = status.out.split("\0").filter((e) => e.length > 3 && /^[ MADRCU?!]{2} /.test(e)).length;
  return { branch: branchName(dir), clean: changes === 0, changes };
}

function branchName(dir: string): string {
  const symbolic = git(dir, ["symbolic-ref", "--short", "-q", "HEAD"]);
  const name = symbolic.code === 0 ? symbolic.out.trim() : "";
  const head = git(dir, ["rev-parse", "--short", "-q", "--verify", "HEAD"]);
  if (name) return head.code === 0 ? name : `${name} (no commits yet)`;
  return head.code === 0 ? `HEAD detached at ${head.out.trim()}` : "(no branch)";
}

/** The commit message: the goal as subject, the model's summary as body, and the changeset id as a trailer. */
export function commitMessage(goal: string, summary: string, changesetId: string): string {
  const firstLine = goal.replace(/\s+/g, " ").trim();
  const subject = firstLine.length > 72 ? `${firstLine.slice(0, 71)}…` : firstLine || "Changes approved in Pencil";
  const body = summary.trim().slice(0, MAX_SUMMARY_CHARS);
  return [subject, "", ...(body ? [body, ""] : []), `Pencil-Changeset: ${changesetId}`, ""].join("\n");
}

/**
 * Makes one commit of exactly `paths` (workspace-relative, as applied), nothing else:
 * other changes in the working tree and the owner's own staged index entries are left
 * as they were. The author is whoever the owner's git config names. Never pushes.
 * Paths git ignores are left out and said.
 */
export function commitApplied(workspaceRoot: string, paths: string[], message: string): CommitResult {
  const state = gitState(workspaceRoot);
  if (!state)
    return {
      ok: false,
      reason: `${workspaceRoot} is not in a git repository, so nothing was committed (the files are applied).`,
    };
  if (paths.length === 0) return { ok: false, reason: "No file was applied, so there is nothing to commit." };
  const skipped: { path: string; reason: string }[] = [];
  const ignored = git(workspaceRoot, ["check-ignore", "-z", "--stdin"], `${paths.join("\0")}\0`);
  const ignoredSet = new Set(ignored.code === 0 ? ignored.out.split("\0").filter(Boolean) : []);
  const files = paths.filter((p) => {
    if (!ignoredSet.has(p)) return true;
    skipped.push({ path: p, reason: "ignored by .gitignore" });
    return false;
  });
  if (files.length === 0)
    return { ok: false, reason: `Every applied file is ignored by git (${paths.join(", ")}); nothing was committed.` };
  // `add -A` records new files and deletions of exactly these paths; `commit --only` then commits them alone.
  const add = git(workspaceRoot, ["add", "-A", "--", ...files]);
  if (add.code !== 0)
    return {
      ok: false,
      reason: `git add failed: ${add.err || "no message"}. The files are applied; commit them yourself.`,
    };
  const changed = git(workspaceRoot, ["diff", "--cached", "--name-only", "-z", "HEAD", "--", ...files]);
  const unborn = changed.code !== 0;
  if (!unborn && changed.out.split("\0").filter(Boolean).length === 0) {
    return { ok: false, reason: "The applied files already match the last commit; nothing to commit." };
  }
  const commit = git(
    workspaceRoot,
    ["commit", "--only", "--no-verify", "--quiet", "--file=-", "--", ...files],
    message,
  );
  if (commit.code !== 0) {
    const who = /tell me who you are|user\.email|user\.name|empty ident/i.test(commit.err)
      ? ' Set your identity first: git config --global user.name "Your Name" && git config --global user.email you@example.com.'
      : "";
    return {
      ok: false,
      reason: `git commit failed: ${commit.err || "no message"}.${who} The files are applied; nothing was committed.`,
    };
  }
  const sha = git(workspaceRoot, ["rev-parse", "HEAD"]).out.trim();
  return { ok: true, sha, branch: branchName(workspaceRoot), files, skipped };
}

/** Records a commit on the changeset, so `undo` and `log` can say it is in history. */
export function recordCommit(cs: Changeset, result: Extract<CommitResult, { ok: true }>): void {
  cs.commits = [...(cs.commits ?? []), { sha: result.sha, branch: result.branch, files: result.files }];
}
