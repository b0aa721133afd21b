import { afterAll } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { compilePolicy, decide, parseRule } from "../../core/policy/policy.ts";
import { sandboxAvailable } from "../../core/sandbox/namespace.ts";
import { createRunCommandTool, type RunCommandOptions, type SandboxChoice } from "../../tools/run-command.ts";
import { tempDir as sharedTempDir, writeTree } from "./temp.ts";
import { toolContext } from "./tool-context.ts";

/** Text of bytes, as a command wrote them. */
export const dec = (b: Uint8Array) => new TextDecoder().decode(b);
/** What the command printed and what was staged: the tool's text without its first line (the command echoed back). */
export const after = (out: string) => out.slice(out.indexOf("\n"));

/** Directories made by this file's tests: removed when the file ends, whatever the shared helper does at process exit. */
export const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
/** A fresh temporary directory, removed when the test file ends. */
export function tempDir(prefix?: string): string {
  const dir = sharedTempDir(prefix);
  made.push(dir);
  return dir;
}
/** Whether git runs here. */
export const hasGit = spawnSync("git", ["--version"]).status === 0;
/** Whether the namespace sandbox can be set up here (unprivileged user namespaces). */
export const hasNamespace = sandboxAvailable();
/** Every sandbox a command can run in: tests made for each are made everywhere, and skipped where one is missing. */
export const SANDBOX_MODES: SandboxChoice[] = ["namespace", "plain"];
if (!hasNamespace)
  console.warn(
    `${testFileName()}: unprivileged user namespaces are not available here; the namespace sandbox tests are SKIPPED.`,
  );

if (!hasGit) console.warn(`${testFileName()}: git is not installed here; the tests that need it are SKIPPED.`);

/** The running test file's name, for the skip messages printed once per file. */
export function testFileName(): string {
  return (Bun.main.split("/").pop() ?? "test").replace(/\.ts$/, "");
}
/**
 * PATH for commands that run this test's own Bun: its directory first. The sandbox keeps only what PATH leads to,
 * and a checkout under /tmp or a private home has its Bun inside a directory the sandbox covers.
 */
export const RUNTIME_PATH = `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`;
/** The environment of those commands. */
export const RUNTIME_ENV = { PATH: RUNTIME_PATH, LANG: "C.UTF-8" };

/** A workspace with a policy-backed `visible`, a private scratch parent (to see it cleaned) and a run helper. */
export function setup(
  sandbox: SandboxChoice,
  files: Record<string, string | Uint8Array> = {},
  extra: RunCommandOptions = {},
) {
  const root = tempDir("pencil-run-ws-");
  writeTree(root, { "src/app.ts": "export const a = 1;\n", "README.md": "hello\n", ...files });
  const t = toolContext(root);
  const policy = compilePolicy({
    workspaceRoot: t.ws.root,
    home: t.ws.home,
    pencilHome: join(tempDir(), "ph"),
    rules: [parseRule("Read(private/**)", "deny", "test")],
  });
  // As the policy seam has it: only what a read would be allowed without asking (so nothing outside the workspace).
  t.ctx.visible = (real) => decide(policy, { tool: "run_command", access: "read", real }).decision === "allow";
  const scratchParent = tempDir("pencil-run-parent-");
  const tool = createRunCommandTool({ sandbox, scratchParent, parentEnv: RUNTIME_ENV, ...extra });
  const run = (command: string) => t.run(tool, { command });
  /** Ends the run: the scratch kept for its commands is removed. */
  const close = () => tool.close?.();
  return { root: t.ws.root, ...t, run, scratchParent, close };
}

/** A fake real home: credentials, Pencil state, private files, and a toolchain on PATH in the shapes the sandbox keeps reachable. */
export function fakeHome() {
  const home = tempDir("pencil-run-home-");
  writeTree(home, {
    ".ssh/id_rsa": "FAKE-SSH-KEY-4711\n",
    ".netrc": "machine x password NETRC-SECRET\n",
    ".config/gh/hosts.yml": "oauth_token: GH-SECRET\n",
    ".pencil/changesets/c1.json": "PENCIL-STATE-HOME\n",
    "notes.txt": "HOME-NOTES\n",
    "opt/secret.txt": "OPT-SECRET\n",
    // An install prefix: bin/ needs its lib/ beside it.
    "tools/acme/bin/acme": '#!/bin/sh\n. "$(dirname "$0")/../lib/acme.sh"\n',
    "tools/acme/lib/acme.sh": "echo acme-ok\n",
    // A linked global package (npm -g style): the link target's node_modules is kept.
    "opt/pkgs/node_modules/greet/bin/greet.sh": '#!/bin/sh\ncat "$(dirname "$(readlink -f "$0")")/../../dep/msg.txt"\n',
    "opt/pkgs/node_modules/dep/msg.txt": "greet-ok\n",
    // A toolchain root (nvm): kept whole.
    ".nvm/versions/node/v20/bin/mynode": '#!/bin/sh\ncat "$(dirname "$0")/../../../../nvm-version.txt"\n',
    ".nvm/nvm-version.txt": "nvm-ok\n",
  });
  for (const f of [
    "tools/acme/bin/acme",
    "opt/pkgs/node_modules/greet/bin/greet.sh",
    ".nvm/versions/node/v20/bin/mynode",
  ])
    chmodSync(join(home, f), 0o755);
  mkdirSync(join(home, ".local/bin"), { recursive: true });
  symlinkSync("../../opt/pkgs/node_modules/greet/bin/greet.sh", join(home, ".local/bin/greet"));
  // A credentials directory that is a link to somewhere outside home: masked where it really is.
  const elsewhere = tempDir("pencil-run-elsewhere-");
  writeTree(elsewhere, { "aws/credentials": "AWS-SECRET-LINKED\n" });
  symlinkSync(join(elsewhere, "aws"), join(home, ".aws"));
  const pencilHome = tempDir("pencil-run-ph-");
  writeTree(pencilHome, { "state.json": "PENCIL-STATE-OUTSIDE\n" });
  const PATH = [
    `${home}/tools/acme/bin`,
    `${home}/.local/bin`,
    `${home}/.nvm/versions/node/v20/bin`,
    RUNTIME_PATH,
  ].join(":");
  const secrets = [
    "FAKE-SSH-KEY",
    "NETRC-SECRET",
    "GH-SECRET",
    "PENCIL-STATE",
    "OPT-SECRET",
    "AWS-SECRET",
    "HOME-NOTES",
  ];
  return {
    home,
    elsewhere,
    pencilHome,
    PATH,
    secrets,
    options: { realHome: home, pencilHome, parentEnv: { PATH, LANG: "C.UTF-8" } } satisfies RunCommandOptions,
  };
}
