import { spawnSync } from "node:child_process";

/** One finished git process: its exit code (127 when git could not be started) and what it printed. */
interface GitOutput {
  code: number;
  out: string;
  err: string;
}

/** How one git process is run: its standard input, and a temporary index in place of the repository's. */
interface GitRunOptions {
  input?: string | Uint8Array;
  /** GIT_INDEX_FILE: an index of Pencil's own, so the owner's staged entries are never touched. */
  indexFile?: string;
}

/**
 * Every configuration key that makes git start a program, set so that it starts none. These come last on the
 * command line (`-c` wins over every file, includes and the owner's global config among them), so a staged
 * `.gitconfig` that a repository includes cannot bring one back. No transport is allowed at all: Pencil's git
 * never talks to a remote, so ssh commands, proxies and credential helpers have nothing to run for.
 */
const NOTHING_RUNS = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.pager=cat",
  "core.editor=false",
  "core.askPass=",
  "core.sshCommand=",
  "core.gitProxy=",
  "core.alternateRefsCommand=",
  "core.untrackedCache=false",
  "credential.helper=",
  "diff.external=",
  "sequence.editor=false",
  "gpg.program=false",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  "protocol.allow=never",
  "submodule.recurse=false",
  "status.submoduleSummary=false",
  "diff.ignoreSubmodules=all",
  "gc.auto=0",
  "maintenance.auto=false",
  "color.ui=false",
];

/** Variables a git process keeps from Pencil's environment: where the owner's config and identity come from, and the locale. */
const KEPT = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "LC_MESSAGES",
  "TZ",
  "TMPDIR",
  "XDG_CONFIG_HOME",
  "GIT_CONFIG_GLOBAL",
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "EMAIL",
];

/**
 * The environment of every git process: the few variables git needs to find the owner's config and identity,
 * nothing that looks like a credential (Pencil's own keys among them), no GIT_* that could redirect the repository
 * or name a program (GIT_DIR, GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF, GIT_CONFIG_PARAMETERS…), no system config.
 */
export function gitEnv(parent: Record<string, string | undefined> = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  // A fixed list of names chosen here (identity, config location, locale): none holds a key or leads to a socket.
  for (const name of KEPT) {
    const value = parent[name];
    if (value !== undefined && value !== "") env[name] = value;
  }
  env.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_PROTOCOL_FROM_USER: "0",
    GIT_PAGER: "cat",
    GIT_EDITOR: "false",
  };
}

/**
 * The `-c` options that stop every configured program, for the repository at `cwd`: the fixed keys, plus each
 * filter and diff driver its configuration names (wherever it came from: an include, the owner's global file),
 * emptied. An empty clean, smudge or process command is no filter, so a `.gitattributes` line `*.ts filter=x`
 * has nothing to run; an empty textconv converts nothing.
 */
function disarmingOptions(cwd: string, parent: Record<string, string | undefined> = process.env): string[] {
  const drivers = new Set<string>();
  const listed = spawnGit(cwd, ["config", "--list", "-z", "--includes", "--name-only"], {}, [], parent);
  // A directory that is not a repository still has global config to list; a failure lists nothing to disarm.
  for (const name of listed.code === 0 ? listed.out.split("\0") : []) {
    const m = /^(filter|diff|merge)\.(.+)\.([^.]+)$/.exec(name);
    if (m) drivers.add(`${m[1]}\0${m[2]}`);
  }
  const options: string[] = [];
  for (const key of NOTHING_RUNS) options.push("-c", key);
  for (const d of drivers) {
    const [section, name] = d.split("\0") as [string, string];
    const keys =
      section === "filter" ? ["clean", "smudge", "process"] : section === "diff" ? ["textconv", "command"] : ["driver"];
    for (const k of keys) options.push("-c", `${section}.${name}.${k}=`);
    if (section === "filter") options.push("-c", `${section}.${name}.required=false`);
  }
  return options;
}

function spawnGit(
  cwd: string,
  args: string[],
  options: GitRunOptions,
  disarm: string[],
  parent: Record<string, string | undefined>,
): GitOutput {
  const env = gitEnv(parent);
  if (options.indexFile) env.GIT_INDEX_FILE = options.indexFile;
  // check-ignore reads plain paths from stdin and refuses the literal-pathspecs switch.
  const literal = args[0] === "check-ignore" || args[0] === "config" ? [] : ["--literal-pathspecs"];
  const run = spawnSync("git", ["--no-pager", ...literal, ...disarm, ...args], {
    cwd,
    env,
    input: options.input,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error) return { code: 127, out: "", err: (run.error as Error).message };
  return { code: run.status ?? 1, out: run.stdout ?? "", err: (run.stderr ?? "").trim() };
}

/** A repository (or any directory) git is run in: every process with the same environment and the same disarming options. */
export interface Git {
  readonly cwd: string;
  run(args: string[], options?: GitRunOptions): GitOutput;
}

/**
 * The one way Pencil starts git. The repository's configuration is listed once (a read that runs nothing) to learn
 * which drivers to disarm; every later process of this handle gets them. Open one handle per operation, so a
 * configuration applied in between is seen.
 */
export function openGit(cwd: string, parent: Record<string, string | undefined> = process.env): Git {
  const disarm = disarmingOptions(cwd, parent);
  return { cwd, run: (args, options = {}) => spawnGit(cwd, args, options, disarm, parent) };
}

/**
 * The owner's value of one config key as git resolves it in `cwd` (repository, includes, global), or null when unset.
 * Reading config starts no configured program, so nothing needs disarming here.
 */
export function gitConfigValue(
  cwd: string,
  key: string,
  parent: Record<string, string | undefined> = process.env,
  pattern?: string,
): string | null {
  // `key` "--get-regexp" with a pattern: every matching key and its value, one a line.
  const args = pattern === undefined ? ["--get", key] : [key, pattern];
  const read = spawnGit(cwd, ["config", "--includes", ...args], {}, [], parent);
  return read.code === 0 ? read.out.replace(/\n$/, "") : null;
}
