import { afterEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ApprovedFile, commitApplied, commitMessage, gitState } from "../../app/git-commit.ts";
import {
  startFakeOpenAIServer,
  textReply,
  toolCallReply,
  type FakeOpenAIServer,
} from "../support/fake-openai-server.ts";
import { plain, runCli, runCliPty } from "../support/cli.ts";
import { tempDir, writeTree } from "../support/temp.ts";

function git(cwd: string, ...args: string[]): string {
  const run = spawnSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });
  if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

/** The applied files as the review approved them: here, what the test wrote to disk. */
function approved(dir: string, paths: string[]): ApprovedFile[] {
  return paths.map((path) => {
    const real = join(dir, path);
    return { path, real, after: existsSync(real) ? { bytes: readFileSync(real), mode: statSync(real).mode } : null };
  });
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
      approved(dir, ["a.txt", "new/b.txt", "c.txt", "ignored.log"]),
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
    const result = commitApplied(dir, approved(dir, ["a.txt"]), "m\n");
    expect(result.ok).toBe(true);
    expect(git(dir, "show", "--name-only", "--format=", "HEAD").trim()).toBe("a.txt");
    expect(existsSync(join(dir, "sneaky.txt"))).toBe(false);
    const again = commitApplied(dir, approved(dir, ["a.txt"]), "m\n");
    expect(again).toEqual({ ok: false, reason: "The applied files already match the last commit; nothing to commit." });
    const plain = tempDir();
    expect(gitState(plain)).toBeNull();
    expect(commitApplied(plain, approved(plain, ["a.txt"]), "m").ok).toBe(false);
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
      textReply("Shouted a.txt and b.txt."),
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
    // The repository's own config names the author here (it wins over the global one, as in git). The message
    // names what was committed; the summary, which speaks of the rejected b.txt too, is left out.
    expect(git(workspace, "log", "-1", "--format=%an|%s|%b")).toMatch(
      /^Owner Person\|shout the files\|- a\.txt\n\nPencil-Changeset: [0-9a-z-]+\n/,
    );
    expect(git(workspace, "log", "-1", "--format=%B")).not.toContain("b.txt");
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

describe("git runs nothing the repository's configuration names", () => {
  /** A repository that includes a tracked `.gitconfig`, as projects do to share settings. */
  function includingRepo(): string {
    const dir = repo({ "a.ts": "export const a = 1;\n" });
    writeFileSync(
      join(dir, ".git/config"),
      `${readFileSync(join(dir, ".git/config"), "utf8")}[include]\n\tpath = ../.gitconfig\n`,
    );
    return dir;
  }
  /** A configuration that runs a program at every status (fsmonitor) and at every add (a clean filter), each leaving a marker. */
  function hostileConfig(markers: string): { ".gitconfig": string; ".gitattributes": string } {
    return {
      ".gitconfig": [
        "[core]",
        `\tfsmonitor = "touch ${markers}/fsmonitor-ran; env > ${markers}/fsmonitor-env; false"`,
        '[filter "x"]',
        `\tclean = "touch ${markers}/clean-ran; tr a-z A-Z"`,
        `\tprocess = "touch ${markers}/process-ran"`,
        '[diff "x"]',
        `\ttextconv = "touch ${markers}/textconv-ran; cat"`,
        "",
      ].join("\n"),
      ".gitattributes": "*.ts filter=x diff=x\n",
    };
  }

  test("commitApplied and gitState: the approved bytes, unfiltered; no fsmonitor, filter or textconv runs", () => {
    const dir = includingRepo();
    const markers = tempDir("pencil-markers-");
    writeTree(dir, hostileConfig(markers));
    writeFileSync(join(dir, "a.ts"), "export const a = 2;\n");
    // The config is live: plain git runs it (the test would prove nothing otherwise).
    const plainDir = includingRepo();
    writeTree(plainDir, hostileConfig(join(markers, "plain")));
    mkdirSync(join(markers, "plain"));
    spawnSync("git", ["status"], { cwd: plainDir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });
    expect(existsSync(join(markers, "plain", "fsmonitor-ran"))).toBe(true);

    expect(gitState(dir)).toMatchObject({ branch: "main", clean: false });
    const result = commitApplied(dir, approved(dir, [".gitconfig", ".gitattributes", "a.ts"]), "m\n");
    if (!result.ok) throw new Error(result.reason);
    expect(git(dir, "cat-file", "blob", "HEAD:a.ts")).toBe("export const a = 2;\n");
    expect(git(dir, "cat-file", "blob", "HEAD:.gitconfig")).toBe(readFileSync(join(dir, ".gitconfig"), "utf8"));
    expect(gitState(dir)).toMatchObject({ clean: true });
    expect(readdirSync(markers)).toEqual(["plain"]);
  });

  test("the blob is the approved bytes even when the disk moved after the apply", () => {
    const dir = repo({ "a.txt": "a\n" });
    const files: ApprovedFile[] = [
      { path: "a.txt", real: join(dir, "a.txt"), after: { bytes: Buffer.from("approved\n"), mode: 0o644 } },
    ];
    writeFileSync(join(dir, "a.txt"), "something else\n");
    const result = commitApplied(dir, files, "m\n");
    if (!result.ok) throw new Error(result.reason);
    expect(git(dir, "cat-file", "blob", "HEAD:a.txt")).toBe("approved\n");
    // The index holds the committed entry; the working tree's other bytes show as an unstaged change.
    expect(git(dir, "status", "--porcelain")).toBe(" M a.txt\n");
  });

  test("an unborn branch gets its first commit, built the same way", () => {
    const fresh = tempDir("pencil-git-");
    git(fresh, "init", "-q", "-b", "trunk");
    git(fresh, "config", "user.name", "Owner Person");
    git(fresh, "config", "user.email", "owner@example.com");
    writeFileSync(join(fresh, "a.txt"), "a\n");
    const first = commitApplied(fresh, approved(fresh, ["a.txt"]), "first\n");
    if (!first.ok) throw new Error(first.reason);
    expect(first.branch).toBe("trunk");
    expect(git(fresh, "log", "--format=%s").trim()).toBe("first");
    expect(git(fresh, "ls-files")).toBe("a.txt\n");
  });

  test("agent --commit through the CLI: a staged .gitconfig and .gitattributes are flagged, approved, committed as shown, and run nothing then or at the next review", async () => {
    const workspace = includingRepo();
    const markers = tempDir("pencil-markers-");
    const hostile = hostileConfig(markers);
    const groq = await startFakeOpenAIServer();
    servers.push(groq);
    const home = tempDir("pencil-home-");
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
        { name: "write_file", arguments: { path: ".gitconfig", content: hostile[".gitconfig"] } },
        { name: "write_file", arguments: { path: ".gitattributes", content: hostile[".gitattributes"] } },
      ]),
      toolCallReply([{ name: "read_file", arguments: { path: "a.ts" } }]),
      toolCallReply([{ name: "edit_file", arguments: { path: "a.ts", old_string: "a = 1", new_string: "a = 2" } }]),
      textReply("Shared settings and a = 2."),
    );
    const { code, output } = await runCliPty(["agent", "share settings", "--commit", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: "[e]dit [s]teps ", send: "y\r" },
        { expect: "[e]dit [s]teps ", send: "y\r" },
        { expect: "[e]dit [s]teps ", send: "y\r" },
      ],
    });
    expect(code).toBe(0);
    expect(plain(output)).toMatch(/\.gitconfig[^\n]*runs-code/);
    expect(plain(output)).toMatch(/\.gitattributes[^\n]*runs-code/);
    expect(output).toMatch(/committed [0-9a-f]{12} on main: 3 file\(s\)/);
    expect(git(workspace, "cat-file", "blob", "HEAD:a.ts")).toBe("export const a = 2;\n");
    expect(git(workspace, "cat-file", "blob", "HEAD:.gitconfig")).toBe(hostile[".gitconfig"]);
    expect(readdirSync(markers)).toEqual([]);
    // The next review reads the status again, with the configuration now on disk and included.
    groq.enqueue(
      toolCallReply([{ name: "write_file", arguments: { path: "later/notes.md", content: "later\n" } }]),
      textReply("Added b."),
    );
    const again = await runCliPty(["agent", "add b", "--commit", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [{ expect: "[e]dit [s]teps ", send: "y\r" }],
    });
    expect(again.code).toBe(0);
    expect(again.output).toContain("git: on main, working tree clean");
    expect(git(workspace, "cat-file", "blob", "HEAD:later/notes.md")).toBe("later\n");
    expect(readdirSync(markers)).toEqual([]);
  }, 30_000);
});
