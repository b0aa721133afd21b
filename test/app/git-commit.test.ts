import { afterEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitApplied, commitMessage, gitState } from "../../app/git-commit.ts";
import {
  startFakeOpenAIServer,
  textReply,
  toolCallReply,
  type FakeOpenAIServer,
} from "../support/fake-openai-server.ts";
import { runCli, runCliPty } from "../support/cli.ts";
import { tempDir, writeTree } from "../support/temp.ts";

function git(cwd: string, ...args: string[]): string {
  const run = spawnSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });
  if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

function repo(files: Record<string, string>): string {
  const dir = tempDir("pencil-git-");
  git(dir, "init", "-q", "-b", "main");
  git(dir, "config", "user.name", "Owner Person");
  git(dir, "config", "user.email", "owner@example.com");
  writeTree(dir, files);
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "initial");
  return dir;
}

describe("git-aware apply: the commit", () => {
  test("one commit of exactly the applied files; the owner's other changes, staged or not, stay as they were", () => {
    const dir = repo({
      "a.txt": "a\n",
      "c.txt": "c\n",
      "mine.txt": "mine\n",
      "staged.txt": "s\n",
      ".gitignore": "ignored.log\n",
    });
    expect(gitState(dir)).toEqual({ branch: "main", clean: true, changes: 0 });
    // The owner's own work in progress.
    writeFileSync(join(dir, "mine.txt"), "mine, edited\n");
    writeFileSync(join(dir, "staged.txt"), "s, staged\n");
    git(dir, "add", "staged.txt");
    writeFileSync(join(dir, "untracked.txt"), "u\n");
    expect(gitState(dir)).toMatchObject({ clean: false, changes: 3 });
    // What Pencil applied: a modify, a create in a new directory, a delete, and an ignored file.
    writeFileSync(join(dir, "a.txt"), "A\n");
    writeTree(dir, { "new/b.txt": "b\n", "ignored.log": "log\n" });
    rmSync(join(dir, "c.txt"));
    const before = git(dir, "rev-parse", "HEAD").trim();
    const result = commitApplied(
      dir,
      ["a.txt", "new/b.txt", "c.txt", "ignored.log"],
      commitMessage("shout a", "Changed a to A.", "cs-1"),
    );
    if (!result.ok) throw new Error(result.reason);
    expect(result.skipped).toEqual([{ path: "ignored.log", reason: "ignored by .gitignore" }]);
    expect(git(dir, "rev-list", "--count", `${before}..HEAD`).trim()).toBe("1");
    expect(git(dir, "rev-parse", "HEAD^").trim()).toBe(before);
    expect(git(dir, "show", "--name-status", "--format=", "HEAD").trim().split("\n").sort()).toEqual(
      ["D\tc.txt", "A\tnew/b.txt", "M\ta.txt"].sort(),
    );
    expect(git(dir, "log", "-1", "--format=%an <%ae>").trim()).toBe("Owner Person <owner@example.com>");
    expect(git(dir, "log", "-1", "--format=%B")).toBe("shout a\n\nChanged a to A.\n\nPencil-Changeset: cs-1\n\n");
    // The owner's changes are untouched: staged stays staged, unstaged stays unstaged, untracked stays untracked.
    const status = git(dir, "status", "--porcelain").split("\n").filter(Boolean).sort();
    expect(status).toEqual([" M mine.txt", "?? untracked.txt", "M  staged.txt"].sort());
  });

  test("a pre-commit hook cannot add files to the commit; no repository or no change is said", () => {
    const dir = repo({ "a.txt": "a\n" });
    const hook = join(dir, ".git/hooks/pre-commit");
    writeFileSync(hook, "#!/bin/sh\necho sneaky > sneaky.txt\ngit add sneaky.txt\n");
    chmodSync(hook, 0o755);
    writeFileSync(join(dir, "a.txt"), "A\n");
    const result = commitApplied(dir, ["a.txt"], "m\n");
    expect(result.ok).toBe(true);
    expect(git(dir, "show", "--name-only", "--format=", "HEAD").trim()).toBe("a.txt");
    expect(existsSync(join(dir, "sneaky.txt"))).toBe(false);
    const again = commitApplied(dir, ["a.txt"], "m\n");
    expect(again).toEqual({ ok: false, reason: "The applied files already match the last commit; nothing to commit." });
    const plain = tempDir();
    expect(gitState(plain)).toBeNull();
    expect(commitApplied(plain, ["a.txt"], "m").ok).toBe(false);
  });
});

const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

describe("agent --commit, end to end", () => {
  test("approve in the review → one commit with the goal and summary; undo reverts the files and says the commit stays", async () => {
    const workspace = repo({ "a.txt": "alpha\n", "b.txt": "beta\n" });
    writeFileSync(join(workspace, "notes.txt"), "the owner's untracked notes\n");
    const groq = await startFakeOpenAIServer();
    servers.push(groq);
    const home = tempDir("pencil-home-");
    writeFileSync(join(home, ".gitconfig"), "[user]\n\tname = Global Owner\n\temail = global@example.com\n");
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      PENCIL_HOME: join(home, ".pencil"),
      GROQ_API_KEY: "gsk_test_key",
      GROQ_BASE_URL: `${groq.url}/openai/v1`,
      NO_COLOR: "1",
      GIT_CONFIG_NOSYSTEM: "1",
    };
    groq.enqueue(
      toolCallReply([
        { name: "read_file", arguments: { path: "a.txt" } },
        { name: "read_file", arguments: { path: "b.txt" } },
      ]),
      toolCallReply([
        { name: "edit_file", arguments: { path: "a.txt", old_string: "alpha", new_string: "ALPHA" } },
        { name: "edit_file", arguments: { path: "b.txt", old_string: "beta", new_string: "BETA" } },
      ]),
      textReply("Shouted a.txt."),
    );
    const before = git(workspace, "rev-parse", "HEAD").trim();
    const { code, output } = await runCliPty(["agent", "shout the files", "--commit", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: "[e]dit [s]teps ", send: "y\r" },
        { expect: "[e]dit [s]teps ", send: "n\r" },
      ],
    });
    expect(code).toBe(0);
    expect(output).toContain("git: on main, working tree had 1 uncommitted change(s)");
    expect(output).toMatch(/committed [0-9a-f]{12} on main: 1 file\(s\)\. Nothing was pushed\./);
    expect(git(workspace, "rev-list", "--count", `${before}..HEAD`).trim()).toBe("1");
    expect(git(workspace, "show", "--name-only", "--format=", "HEAD").trim()).toBe("a.txt");
    // The repository's own config names the author here (it wins over the global one, as in git).
    expect(git(workspace, "log", "-1", "--format=%an|%s|%b")).toContain("Owner Person|shout the files|Shouted a.txt.");
    expect(git(workspace, "status", "--porcelain")).toBe("?? notes.txt\n");

    const undo = await runCli(["undo", "-w", workspace], { cwd: workspace, env });
    expect(undo.code).toBe(0);
    expect(undo.stdout).toContain("reverted a.txt");
    expect(undo.stdout).toMatch(/The commit [0-9a-f]{12} made of these files is still in git history/);
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("alpha\n");
    expect(git(workspace, "rev-list", "--count", `${before}..HEAD`).trim()).toBe("1");
  });

  test("--commit outside a git repository stops before any work (exit 2)", async () => {
    const workspace = tempDir("pencil-ws-");
    const home = tempDir("pencil-home-");
    const result = await runCli(["agent", "x", "--commit", "-w", workspace], {
      cwd: workspace,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        PENCIL_HOME: join(home, ".pencil"),
        GROQ_API_KEY: "k",
        GROQ_BASE_URL: "http://127.0.0.1:9/v1",
      },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--commit needs a git repository");
  });
});
