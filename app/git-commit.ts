import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import type { Changeset, FileChange } from "../core/staging/changeset.ts";
import { type Git, openGit } from "../core/git/run-git.ts";
import { isInside } from "../core/workspace.ts";

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
  | {
      ok: true;
      sha: string;
      branch: string;
      files: string[];
      skipped: { path: string; reason: string }[];
      /** Set when the commit is made but something around it was not (the owner's index); one sentence for the owner. */
      note?: string;
    }
  | { ok: false; reason: string };

/** One applied file as the owner approved it: its path in the changeset, its real path, and its bytes and mode (null: deleted). */
export interface ApprovedFile {
  path: string;
  real: string;
  after: { bytes: Uint8Array; mode: number } | null;
}

/** Most bytes of the model's summary kept in a commit message body. */
const MAX_SUMMARY_CHARS = 2000;

/** The branch and cleanliness of the repository `dir` is in; null when it is not in one (or git is missing). */
export function gitState(dir: string): GitState | null {
  const git = openGit(dir);
  const inside = git.run(["rev-parse", "--is-inside-work-tree"]);
  if (inside.code !== 0 || inside.out.trim() !== "true") return null;
  // Submodules are not entered: their own configuration would be read by git processes this one starts.
  const status = git.run(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all"]);
  if (status.code !== 0) return null;
  const changes = status.out.split("\0").filter((e) => e.length > 3 && /^[ MADRCU?!]{2} /.test(e)).length;
  return { branch: branchName(git), clean: changes === 0, changes };
}

function branchName(git: Git): string {
  const symbolic = git.run(["symbolic-ref", "--short", "-q", "HEAD"]);
  const name = symbolic.code === 0 ? symbolic.out.trim() : "";
  const head = git.run(["rev-parse", "--short", "-q", "--verify", "HEAD"]);
  if (name) return head.code === 0 ? name : `${name} (no commits yet)`;
  return head.code === 0 ? `HEAD detached at ${head.out.trim()}` : "(no branch)";
}

/**
 * The commit message: the goal as subject; as body, the applied files and the model's summary when it names no file
 * that was left out (rejected, conflicting, ignored), since the commit must describe only what it holds; the changeset
 * id as a trailer.
 */
export function commitMessage(
  goal: string,
  summary: string,
  changesetId: string,
  files?: { committed: string[]; leftOut: string[] },
): string {
  const firstLine = goal.replace(/\s+/g, " ").trim();
  const subject = firstLine.length > 72 ? `${firstLine.slice(0, 71)}…` : firstLine || "Changes approved in Pencil";
  const text = summary.trim().slice(0, MAX_SUMMARY_CHARS);
  const namesLeftOut = files ? files.leftOut.some((p) => mentions(text, p)) : false;
  const body: string[] = [];
  if (files) body.push(files.committed.map((p) => `- ${p}`).join("\n"));
  if (text && !namesLeftOut) body.push(text);
  return [subject, "", ...body.flatMap((b) => [b, ""]), `Pencil-Changeset: ${changesetId}`, ""].join("\n");
}

/** True when `text` names `path` or its file name (a summary says "b.txt" as often as "src/b.txt"). */
function mentions(text: string, path: string): boolean {
  const name = path.slice(path.lastIndexOf("/") + 1);
  return text.includes(path) || (name.length > 0 && text.includes(name));
}

/**
 * Makes one commit of exactly the approved bytes of `files`, nothing else, without running anything the
 * repository's configuration names: the blobs are written with `hash-object --no-filters`, the tree is built in a
 * temporary index from HEAD's, and the branch is moved only from the HEAD this read (a commit made meanwhile is
 * never lost). The owner's index gets the same entries for these paths, so `git status` does not show them as
 * staged back; their other staged entries and the working tree are left as they were. The author is whoever the
 * owner's git config names. Never pushes. Paths git ignores, and paths outside the repository, are left out and said.
 */
export function commitApplied(workspaceRoot: string, approved: ApprovedFile[], message: string): CommitResult {
  if (!gitState(workspaceRoot))
    return {
      ok: false,
      reason: `${workspaceRoot} is not in a git repository, so nothing was committed (the files are applied).`,
    };
  if (approved.length === 0) return { ok: false, reason: "No file was applied, so there is nothing to commit." };
  const git = openGit(workspaceRoot);
  const top = git.run(["rev-parse", "--show-toplevel"]).out.trim();
  const skipped: { path: string; reason: string }[] = [];
  const inRepo = approved.filter((f) => {
    if (isInside(top, f.real) && f.real !== top) return true;
    skipped.push({ path: f.path, reason: "outside the repository" });
    return false;
  });
  const repoPath = (f: ApprovedFile) => relative(top, f.real).split(sep).join("/");
  const ignored = git.run(["check-ignore", "-z", "--stdin"], {
    input: `${inRepo.map((f) => relative(workspaceRoot, f.real)).join("\0")}\0`,
  });
  const ignoredSet = new Set(ignored.code === 0 ? ignored.out.split("\0").filter(Boolean) : []);
  const files = inRepo.filter((f) => {
    if (!ignoredSet.has(relative(workspaceRoot, f.real))) return true;
    skipped.push({ path: f.path, reason: "ignored by .gitignore" });
    return false;
  });
  if (files.length === 0)
    return {
      ok: false,
      reason: `Every applied file is ignored by git or outside the repository (${approved.map((f) => f.path).join(", ")}); nothing was committed.`,
    };
  const scratch = mkdtempSync(join(tmpdir(), "pencil-commit-"));
  try {
    return commitInScratch(git, scratch, files, repoPath, message, skipped);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function commitInScratch(
  git: Git,
  scratch: string,
  files: ApprovedFile[],
  repoPath: (f: ApprovedFile) => string,
  message: string,
  skipped: { path: string; reason: string }[],
): CommitResult {
  const failed = (what: string, err: string): CommitResult => ({
    ok: false,
    reason: `git ${what} failed: ${err || "no message"}. The files are applied; nothing was committed.`,
  });
  const headRef = git.run(["symbolic-ref", "-q", "HEAD"]);
  const ref = headRef.code === 0 ? headRef.out.trim() : "HEAD";
  const headRead = git.run(["rev-parse", "-q", "--verify", "HEAD^{commit}"]);
  const head = headRead.code === 0 ? headRead.out.trim() : null;
  const index = join(scratch, "index");
  if (head) {
    const read = git.run(["read-tree", head], { indexFile: index });
    if (read.code !== 0) return failed("read-tree", read.err);
  }
  // The approved bytes go to git from files of Pencil's own, never from the working tree (which may have moved).
  const written = files.filter((f) => f.after !== null);
  written.forEach((f, i) => writeFileSync(join(scratch, `blob-${i}`), f.after!.bytes));
  const hashed = git.run(["hash-object", "-w", "--no-filters", "--stdin-paths"], {
    input: written.map((_, i) => join(scratch, `blob-${i}`)).join("\n") + (written.length ? "\n" : ""),
  });
  if (hashed.code !== 0) return failed("hash-object", hashed.err);
  const oids = hashed.out.split("\n").filter(Boolean);
  const entries = files.map((f) => {
    const at = written.indexOf(f);
    if (at === -1) return `0 ${"0".repeat(40)}\t${repoPath(f)}`;
    return `${(f.after!.mode & 0o111) !== 0 ? "100755" : "100644"} ${oids[at]}\t${repoPath(f)}`;
  });
  const infoInput = `${entries.join("\n")}\n`;
  const update = git.run(["update-index", "--index-info"], { input: infoInput, indexFile: index });
  if (update.code !== 0) return failed("update-index", update.err);
  const tree = git.run(["write-tree"], { indexFile: index });
  if (tree.code !== 0) return failed("write-tree", tree.err);
  const treeOid = tree.out.trim();
  if (head && git.run(["rev-parse", `${head}^{tree}`]).out.trim() === treeOid)
    return { ok: false, reason: "The applied files already match the last commit; nothing to commit." };
  const commit = git.run(["commit-tree", treeOid, ...(head ? ["-p", head] : []), "-F", "-"], { input: message });
  if (commit.code !== 0) {
    const who = /tell me who you are|user\.email|user\.name|empty ident/i.test(commit.err)
      ? ' Set your identity first: git config --global user.name "Your Name" && git config --global user.email you@example.com.'
      : "";
    return {
      ok: false,
      reason: `git commit failed: ${commit.err || "no message"}.${who} The files are applied; nothing was committed.`,
    };
  }
  const sha = commit.out.trim();
  // The old value is checked: if the branch moved since it was read, nothing is overwritten.
  const moved = git.run(["update-ref", "-m", "pencil: commit approved changes", ref, sha, head ?? ""]);
  if (moved.code !== 0)
    return {
      ok: false,
      reason: `${ref} moved while the commit was made (${moved.err || "no message"}); the files are applied, commit ${sha.slice(0, 12)} was made but no branch points at it.`,
    };
  // The owner's index gets the committed entries, so `git status` shows those paths as committed, not staged back.
  const ownIndex = git.run(["update-index", "--index-info"], { input: infoInput });
  const note =
    ownIndex.code === 0
      ? undefined
      : `The repository's index was not updated (${ownIndex.err || "no message"}): git status may show the committed files as staged back until you run git reset -q.`;
  const branch = ref === "HEAD" ? `HEAD detached at ${sha.slice(0, 7)}` : ref.replace(/^refs\/heads\//, "");
  return { ok: true, sha, branch, files: files.map((f) => f.path), skipped, ...(note ? { note } : {}) };
}

/** The applied files of a changeset as `commitApplied` takes them: the approved bytes from the record itself. */
export function approvedFiles(cs: Changeset, paths: readonly string[]): ApprovedFile[] {
  const byPath = new Map<string, FileChange>(cs.files.map((f) => [f.path, f]));
  return paths.flatMap((p) => {
    const f = byPath.get(p);
    return f
      ? [{ path: f.path, real: f.real, after: f.after ? { bytes: f.after.bytes, mode: f.after.mode } : null }]
      : [];
  });
}

/** Records a commit on the changeset, so `undo` and `log` can say it is in history. */
export function recordCommit(cs: Changeset, result: Extract<CommitResult, { ok: true }>): void {
  cs.commits = [...(cs.commits ?? []), { sha: result.sha, branch: result.branch, files: result.files }];
}
