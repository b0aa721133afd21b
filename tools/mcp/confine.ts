import { type Dirent, lstatSync, readdirSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative } from "node:path";
import { LinkGuard } from "../../core/policy/hard-links.ts";
import { compilePolicy, decide, type Policy } from "../../core/policy/policy.ts";
import { commandPath } from "../../core/sandbox/command-env.ts";
import { commandDenies, planHiding, secretPaths } from "../../core/sandbox/hiding.ts";
import { sandboxedLaunch } from "../../core/sandbox/namespace.ts";
import { isInside } from "../../core/workspace.ts";
import type { ServerBinding } from "./config.ts";
import { fileSha256, type NpxLaunch, npmCacheDir, npxFromCache, programDirs, programFiles } from "./program.ts";

/** How a stdio server's command is started: the command, arguments and environment to spawn, and what confines it. */
export interface ConfinedCommand {
  command: string;
  args: string[];
  /** What to spawn it with: in the sandbox PATH alone (the server's own environment is handed to it inside); else the server's. */
  env: Record<string, string>;
  /** "sandbox": in the command sandbox (read-only system, home, credentials and secrets hidden; no network unless opened); "none": as is. */
  confinement: "sandbox" | "none";
}

/** Where a stdio server runs: `root` a private directory of its own, `dir` (inside it) its working directory and home. */
export interface ServerPlace {
  root: string;
  dir: string;
}

/** One path among a server's arguments, judged by where it really leads. */
interface ArgPath {
  /** The path as written (an argument, or the value of `--opt=/path`). */
  written: string;
  /** Its real path (links followed). */
  real: string;
  /**
   * `workspace`: inside the workspace (shown read-only); `outside`: elsewhere (shown read-only, and named in a
   * proposal's question); `private`: the policy refuses reading it, or it is the home or holds it (never shown).
   */
  where: "workspace" | "outside" | "private";
}

/** What a stdio server would be shown and run, found before it starts (and before a proposal is asked about). */
export interface ServerView {
  /** The program's files (the command's, and each absolute file argument's, as named): a proposal's approval is bound to their content. */
  programs: string[];
  /** The existing absolute paths among its arguments, by where they lead. */
  paths: ArgPath[];
  /** The directories shown read-only: the program's packages and dependency trees, and the path arguments not private. */
  keep: string[];
  /** Files in the kept directories that are hard links to a secret (another name of a key file, of a `.env`): masked. */
  linkedSecrets: string[];
  /** `npx PKG` found in the npx cache: the package's bin is run directly. */
  npx: NpxLaunch | null;
  /** What is said to the owner about the view (a kept directory too large to check for hard links, say). */
  notices: string[];
}

/** What inspectServer needs. */
export interface ViewInput {
  workspaceRoot: string;
  /** The owner's home (its credentials are never shown; a path that is the home or holds it is not shown). */
  home?: string;
  pencilHome: string;
  /** Pencil's environment: the PATH the command is looked up on, npm's cache setting (default process.env). */
  env?: Record<string, string | undefined>;
  /** The run's policy, whose read denies keep an argument private (default the built-in denies). */
  policy?: Policy;
  /** Entries looked at in all kept directories when searching them for hard links (default 200,000). */
  linkBudget?: number;
  /** False to skip that search (for what only names the program, as doctor does); default true. */
  scanLinks?: boolean;
}

/**
 * Finds what a stdio server's command runs and needs to see: the program (resolved on PATH, or an `npx` package in
 * the npx cache), its package and dependency tree, and the paths its arguments name, each judged by its real path.
 * Files in what is shown that are hard links to a secret are listed to be masked, by the same rule as the tools'
 * and commands' (core/hard-links.ts).
 */
export function inspectServer(command: string, args: readonly string[], input: ViewInput): ServerView {
  const env = input.env ?? process.env;
  const realHome = input.home ?? homedir();
  const home = realOrNull(realHome);
  const path = commandPath(env);
  const policy =
    input.policy ??
    compilePolicy({ workspaceRoot: input.workspaceRoot, home: realHome, pencilHome: input.pencilHome, rules: [] });
  const denies = commandDenies(policy, secretPaths(realHome, input.pencilHome, env)).hidden;
  const notices: string[] = [];
  const npx = npxFromCache(command, args, npmCacheDir(env, realHome));
  const files = npx ? [npx.bin] : programFiles(command, args, path);
  const realFiles = files.map((f) => realOrNull(f) ?? f);
  const keep = new Set<string>();
  for (const file of files) for (const dir of programDirs(file, home)) if (showable(dir, home)) keep.add(dir);
  const paths: ArgPath[] = [];
  for (const written of pathArgs(npx ? npx.args : args)) {
    const real = realOrNull(written);
    if (real === null) continue;
    const where: ArgPath["where"] =
      !showable(real, home) || denies(real) ? "private" : isInside(input.workspaceRoot, real) ? "workspace" : "outside";
    paths.push({ written, real, where });
    if (where === "private" || realFiles.includes(real)) continue;
    keep.add(real);
  }
  const guard = new LinkGuard({ root: input.workspaceRoot, home: realHome, pencilHome: input.pencilHome });
  const judge = (other: string) => decide(policy, { tool: "mcp", access: "read", real: other });
  const linkedSecrets: string[] = [];
  const budget = { left: input.linkBudget ?? 200_000 };
  // A directory inside another kept one comes with it: each tree is searched once.
  const outermost = [...keep]
    .sort((a, b) => a.length - b.length)
    .filter((d, i, all) => !all.slice(0, i).some((o) => isInside(o, d)));
  for (const dir of input.scanLinks === false ? [] : outermost) {
    const found = hardLinkedSecrets(dir, guard, judge, budget);
    if (found === null) {
      for (const k of [...keep]) if (isInside(dir, k)) keep.delete(k);
      notices.push(
        `${dir} is not shown to the server: it holds too many files to check each for hard links to secrets.`,
      );
    } else linkedSecrets.push(...found);
  }
  return { programs: files, paths, keep: [...keep], linkedSecrets, npx, notices };
}

/** The absolute paths among arguments: whole arguments, and the values of `--option=/path`. */
function pathArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (isAbsolute(a)) out.push(a);
    else {
      const value = /^--?[\w-]+=(\/.*)$/.exec(a)?.[1];
      if (value) out.push(value);
    }
  }
  return out;
}

/** False for `/` and for the home or a directory that holds it: that would show the whole home. */
function showable(dir: string, home: string | null): boolean {
  return dir !== "/" && (home === null || !isInside(dir, home));
}

/**
 * The files below `dir` that are hard links the guard refuses to read (another name of a key file, of PENCIL_HOME's
 * files or of a name the policy denies in the workspace), as run_command's copy judges them, and those that are
 * another name of a file below `dir` whose own name the policy denies (a kept project's `.env`); null when the budget
 * ran out first.
 */
function hardLinkedSecrets(
  dir: string,
  guard: LinkGuard,
  judge: (real: string) => ReturnType<typeof decide>,
  budget: { left: number },
): string[] | null {
  const linked: { path: string; key: string }[] = [];
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      continue; // unreadable to Pencil, so to the server too
    }
    for (const e of entries) {
      if (budget.left-- <= 0) return null;
      const p = join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) {
        let st;
        try {
          st = lstatSync(p);
        } catch {
          continue; // gone meanwhile
        }
        if (st.nlink > 1) linked.push({ path: p, key: `${st.dev}:${st.ino}` });
      }
    }
  }
  const deniedKeys = new Set(linked.filter((f) => judge(f.path).decision === "deny").map((f) => f.key));
  return linked
    .filter(
      (f) =>
        deniedKeys.has(f.key) || guard.judge(f.path, "read", judge, { unprovenRead: "allow" })?.decision === "deny",
    )
    .map((f) => f.path);
}

/** What a proposal's approval is bound to: each program file's SHA-256, and where each path argument leads. */
export function bindingOf(view: ServerView): ServerBinding {
  return {
    programs: view.programs.map((path) => ({ path, sha256: fileSha256(path) })),
    paths: view.paths.map((p) => ({ written: p.written, real: p.real })),
  };
}

/** The words a proposal's question adds about what the server would be shown: each path argument that leads elsewhere. */
export function describeView(view: ServerView, workspaceRoot: string): string[] {
  const lines: string[] = [];
  for (const p of view.paths) {
    const led = p.real === p.written ? "" : ` leads to ${p.real}, which`;
    const shown = (real: string) => (isInside(workspaceRoot, real) ? relative(workspaceRoot, real) || "." : real);
    if (p.where === "outside")
      lines.push(`${p.written}${led} is OUTSIDE the workspace: the server would see it (read-only).`);
    else if (p.where === "private") lines.push(`${p.written}${led} is private (never shown to the server).`);
    else if (p.real !== p.written) lines.push(`${p.written} leads to ${shown(p.real)} in the workspace.`);
  }
  if (view.npx) lines.push(`npx runs ${view.npx.spec} from the npx cache: ${view.npx.bin}.`);
  return lines;
}

/**
 * Wraps a stdio MCP server's command so that, where the namespace sandbox works, it
 * runs in the command sandbox: read-only system, the owner's home, credentials,
 * PENCIL_HOME, .env files and host sockets hidden, other projects and the workspace
 * out of sight, writes only in its private directory and temporary space, and no
 * network but Pencil's proxy (when the owner's settings open it). What `view` keeps is
 * shown read-only, its hard-linked secrets masked. Where the sandbox is not available
 * it runs as is.
 */
export function confineServer(
  command: string,
  args: string[],
  input: {
    view: ServerView;
    place: ServerPlace;
    pencilHome: string;
    realHome?: string;
    /** Pencil's environment: the PATH whose toolchain the server is shown (default process.env). */
    env?: Record<string, string | undefined>;
    /** The server's own environment. */
    serverEnv: Record<string, string>;
    /** With the network on: the proxy's unix socket (in `place.root`) and the CA files its TLS clients are to trust. */
    proxy?: { socket: string; trust: { ca: string; bundle: string } | null };
  },
): ConfinedCommand {
  const realHome = input.realHome ?? homedir();
  const path = commandPath(input.env ?? process.env);
  const hiding = planHiding({
    realHome,
    pencilHome: input.pencilHome,
    wsRoot: input.place.root,
    scratchRoot: input.place.root,
    path,
    // The forwarder to the proxy is run by Pencil's own Bun.
    keep: [...input.view.keep, ...(input.proxy ? [dirname(process.execPath)] : [])],
  });
  hiding.secrets.push(...input.view.linkedSecrets);
  const launch = sandboxedLaunch({
    root: input.place.root,
    dir: input.place.dir,
    command,
    args,
    env: input.serverEnv,
    hiding,
    ...(input.proxy ? { proxy: input.proxy } : {}),
  });
  return launch ? { ...launch, confinement: "sandbox" } : { command, args, env: input.serverEnv, confinement: "none" };
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    // A path that does not resolve reaches nothing: the caller treats it as not there.
    return null;
  }
}
