import { spawn, spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { z } from "zod";
import { compilePolicy, decide, type Policy } from "../policy.ts";
import { diffScratch, disposeScratch, makeScratch, ScratchError, sharedLeaks, type Scratch, type ScratchChange, type ShareMode } from "../scratch.ts";
import { isInside, realPathLoose } from "../workspace.ts";
import { originOf } from "./staging-helpers.ts";
import { ToolError, type PencilTool, type ToolContext } from "./tool.ts";

/**
 * Where the command runs.
 * - `namespace` (Linux with unprivileged user namespaces): a private mount
 *   namespace where the scratch copy is mounted at the workspace's own path,
 *   shared directories are bind-mounted read-only, the real home directory is
 *   covered by an empty one (the toolchain on PATH, the workspace and the
 *   scratch copy stay reachable), credentials and PENCIL_HOME are masked, and
 *   every other mount is remounted read-only (/proc, /sys and /dev excepted).
 *   Writes can reach only the scratch copy, whatever path the command uses.
 *   If any of that fails the command does not run (a ToolError says why).
 * - `plain` (anywhere else): NOT a sandbox. The command runs in the scratch
 *   copy at its temp path but with the user's full permissions: it can read
 *   and write anything the user can. The tool reports `sandboxed() === false`
 *   so the policy seam asks the owner before every such run.
 * - `auto`: `namespace` when the system allows it, else `plain`; a run whose
 *   namespace setup fails is refused, never downgraded to `plain`.
 */
export type SandboxChoice = "auto" | "namespace" | "plain";

/** Knobs of run_command; every one has a default. */
export interface RunCommandOptions {
  /** Milliseconds before the command's whole process group is killed (default 120 000). */
  timeoutMs?: number;
  /** Bytes of combined stdout+stderr kept, from the end (default 30 KiB). */
  outputCapBytes?: number;
  sandbox?: SandboxChoice;
  /** Where scratch directories are made (default: the OS temp dir). */
  scratchParent?: string;
  /** The environment PATH, LANG and extras are taken from (default process.env). */
  parentEnv?: Record<string, string | undefined>;
  /** Extra variables for the command; any whose name looks secret is dropped. */
  extraEnv?: Record<string, string>;
  /** Directory names always shared instead of copied (default DEPENDENCY_DIRS). */
  shareNames?: readonly string[];
  /** Ignored directories with more entries than this are shared (default 1000). */
  shareOver?: number;
  /** The user's real home directory, hidden from the command in the namespace sandbox (default os.homedir()). */
  realHome?: string;
  /** Pencil's state directory, never visible to the command (default $PENCIL_HOME, else ~/.pencil). */
  pencilHome?: string;
}

/**
 * The optional hook through which the session's policy judges writes; the
 * seam should set it (deny → the reason). Without it only the built-in denies
 * (.env, .git, .pencil, outside the workspace, secret directories) apply.
 */
export type WriteRefusal = (real: string) => string | null;

/** What one run produced, before it is turned into the model's text. */
export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** The last bytes of the combined output, decoded. */
  output: string;
  /** How many bytes `output` was decoded from. */
  keptBytes: number;
  /** Total bytes the command wrote to stdout and stderr. */
  outputBytes: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_OUTPUT_CAP = 30 * 1024;
const SETUP_FAILED_EXIT = 97;
const SETUP_MARKER = "pencil-sandbox:";
const LIST_CAP = 200;
const NOT_STAGED_CAP = 30;

const input = z.object({
  command: z.string().min(1).describe("The shell command line to run (bash -c), from the workspace root."),
});

/** `run_command`: runs a command in a scratch copy of workspace + overlay; the files it creates, changes or deletes come back staged. */
export function createRunCommandTool(options: RunCommandOptions = {}): PencilTool<z.infer<typeof input>> {
  return {
    name: "run_command",
    description:
      "Run a shell command (bash -c) in a scratch copy of the workspace that includes your staged changes, e.g. tests, a build, a linter or a formatter. " +
      "Files it creates, modifies or deletes come back as staged changes for review; the real workspace is not changed. " +
      `No stdin, no network guarantees, a ${Math.round((options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000)} s timeout; secrets (.env files, API keys in the environment) are not available. ` +
      "You get the exit code and the end of the output.",
    inputSchema: input,
    claims: () => [],
    runCommand: ({ command }) => command,
    // A `namespace` choice never runs unconfined (it refuses instead), so only `plain` and an `auto` without namespaces are unsandboxed.
    sandboxed: () => {
      const choice = options.sandbox ?? "auto";
      return choice === "namespace" || (choice === "auto" && namespaceAvailable());
    },
    async execute({ command }, ctx) {
      return runCommand(command, ctx, options);
    },
  };
}

/** Runs `command` in a fresh scratch copy, stages its file effects through `ctx.fs`, and returns the model's text. */
export async function runCommand(command: string, ctx: ToolContext, options: RunCommandOptions = {}): Promise<string> {
  if (command.trim() === "") throw new ToolError("The command is empty: give the command line to run, e.g. bun test.");
  if (command.includes("\0")) throw new ToolError("The command contains a NUL byte: give a plain command line.");
  if (ctx.signal?.aborted) throw new ToolError("The run was cancelled before the command started.");
  const mode: ShareMode = chooseMode(options.sandbox ?? "auto");
  const realHome = options.realHome ?? homedir();
  const pencilHome = pencilHomeOf(options);
  const builtins = builtinPolicy(ctx, pencilHome);
  const secrets = secretPaths(realHome, pencilHome);
  // The session's visibility, the built-in read denies even when a caller forgot them, and credentials below home
  // (the workspace may be the home directory itself): secrets never enter the copy.
  const visible = (real: string) =>
    ctx.visible(real) && decide(builtins, { tool: "run_command", access: "read", real }).decision !== "deny" && !secrets.some((p) => isInside(p, real));
  let s: Scratch;
  try {
    s = await makeScratch(ctx.ws, {
      fs: ctx.fs,
      visible,
      share: mode,
      ...(options.scratchParent ? { parent: options.scratchParent } : {}),
      ...(options.shareNames ? { shareNames: options.shareNames } : {}),
      ...(options.shareOver !== undefined ? { shareOver: options.shareOver } : {}),
    });
  } catch (error) {
    const why = error instanceof ScratchError ? error.message : `${(error as Error).message ?? String(error)}. Free disk space in the temp directory or ask the user.`;
    throw new ToolError(`The scratch copy for the command could not be made, so it did not run: ${why}`);
  }
  try {
    const hiding = mode === "namespace" ? planHomeHiding({ realHome, pencilHome, wsRoot: ctx.ws.root, scratchRoot: s.root, path: commandPath(options.parentEnv ?? process.env) }) : null;
    const outcome = await runIn(s, command, options, hiding, ctx.signal);
    if (outcome.setupFailure !== null) {
      // Never a silent downgrade to an unconfined run: the model (and through it the user) learns why nothing ran.
      throw new ToolError(
        `The sandbox could not be set up (${outcome.setupFailure}), so the command did not run. Tell the user: unprivileged user namespaces and bind mounts must work for commands to run sandboxed.`,
      );
    }
    return report(command, s, outcome, ctx, pencilHome);
  } finally {
    disposeScratch(s);
  }
}

/** True for environment variable names that may hold credentials: never passed to commands. */
export function looksSecret(name: string): boolean {
  const upper = name.toUpperCase();
  if (upper === "PWD" || upper === "OLDPWD") return false;
  if (upper.startsWith("TELEGRAM_") || upper.startsWith("INSFORGE_") || upper.endsWith("_API_KEY")) return true;
  return /KEY|TOKEN|SECRET|PASSW|PWD|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE/.test(upper);
}

/** The command's environment: a minimal allow-list, HOME and TMPDIR inside the scratch, nothing that looks secret. */
export function commandEnv(parent: Record<string, string | undefined>, s: Pick<Scratch, "home" | "tmp">, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: commandPath(parent),
    HOME: s.home,
    TMPDIR: s.tmp,
    TMP: s.tmp,
    TEMP: s.tmp,
    LANG: parent.LANG || "C.UTF-8",
    TERM: "dumb",
    CI: "1",
    NO_COLOR: "1",
    PAGER: "cat",
    GIT_PAGER: "cat",
    GIT_TERMINAL_PROMPT: "0",
  };
  for (const name of ["LC_ALL", "LC_CTYPE", "USER", "LOGNAME", "TZ"]) {
    const value = parent[name];
    if (value) env[name] = value;
  }
  for (const [name, value] of Object.entries(extra)) if (!looksSecret(name)) env[name] = value;
  return env;
}

function commandPath(parent: Record<string, string | undefined>): string {
  return parent.PATH || "/usr/local/bin:/usr/bin:/bin";
}

/**
 * Credentials below the home directory, as relative paths. The namespace
 * sandbox masks them even where a kept directory would show them, and no
 * scratch copy holds them (the workspace may be the home directory itself).
 */
export const HOME_SECRETS: readonly string[] = [
  ".ssh", ".aws", ".gnupg", ".config/gh", ".docker", ".kube", ".netrc", ".npmrc", ".pypirc", ".git-credentials",
  ".cargo/credentials", ".cargo/credentials.toml", ".config/gcloud", ".azure", ".password-store", ".local/share/keyrings",
];

/**
 * Directories right below home that hold one whole toolchain and no
 * credentials: kept whole when PATH leads into them (a pyenv shim needs the
 * versions, npm under nvm its lib/).
 */
const TOOLCHAIN_ROOTS: ReadonlySet<string> = new Set([".nvm", ".pyenv", ".rbenv", ".nodenv", ".goenv", ".bun", ".volta", ".deno", ".asdf", ".sdkman"]);

/** How the namespace sandbox hides the real home directory and Pencil's state from a command. */
export interface HomeHiding {
  /** The real home directory, covered by an empty one; null when not covered (missing, `/`, or inside the workspace, whose copy then stands over it). */
  cover: string | null;
  /** Directories below `cover` bound back (read-only, except the workspace and scratch copy): the toolchain on PATH, the workspace, the scratch directory; none inside another. */
  keeps: string[];
  /** Paths masked (by an empty directory or /dev/null) wherever they still exist: HOME_SECRETS and PENCIL_HOME, as given and resolved. */
  secrets: string[];
}

/** What planHomeHiding needs. */
export interface HomeHidingInput {
  /** The user's real home directory. */
  realHome: string;
  /** Pencil's state directory. */
  pencilHome: string;
  /** Real path of the workspace root. */
  wsRoot: string;
  /** The scratch directory (the command's HOME and TMPDIR are in it). */
  scratchRoot: string;
  /** The command's PATH: its directories below home are kept reachable. */
  path: string;
}

/** Plans the cover of the real home: what stays reachable below it (the toolchain on PATH, the workspace, the scratch directory) and which secrets are masked. */
export function planHomeHiding(input: HomeHidingInput): HomeHiding {
  const secrets = secretPaths(input.realHome, input.pencilHome);
  const plan: HomeHiding = { cover: null, keeps: [], secrets };
  const home = realOrNull(input.realHome);
  // Nothing to cover, or `/` (which cannot be), or a workspace holding home: its copy already stands over it, without the secrets.
  if (home === null || home === "/" || isInside(input.wsRoot, home)) return plan;
  plan.cover = home;
  // A home that is not a directory cannot be covered: the runner fails and the command does not run.
  if (!isDir(home)) return plan;
  const wanted: string[] = [];
  if (isInside(home, input.wsRoot)) wanted.push(input.wsRoot);
  const scratch = realOrNull(input.scratchRoot) ?? input.scratchRoot;
  if (isInside(home, scratch)) wanted.push(scratch);
  for (const entry of input.path.split(":")) {
    if (!isAbsolute(entry)) continue;
    const dir = realOrNull(entry);
    if (dir === null || dir === home || !isInside(home, dir) || !isDir(dir)) continue;
    wanted.push(toolchainDir(home, dir));
    // Linked commands (npm -g, bun add -g, pyenv's bin) point elsewhere below home: keep what they point into.
    for (const name of listDir(dir)) {
      const target = linkTarget(join(dir, name));
      if (target !== null && target !== home && isInside(home, target)) wanted.push(linkedDir(home, target));
    }
  }
  for (const k of [...new Set(wanted)].sort((a, b) => a.length - b.length)) {
    // A keep inside a secret would show it; a keep inside another one comes with it.
    if (k === home || secrets.some((x) => isInside(x, k)) || plan.keeps.some((o) => isInside(o, k))) continue;
    plan.keeps.push(k);
  }
  return plan;
}

/** HOME_SECRETS below `realHome`, and `pencilHome`: each as given and as its real path (a linked ~/.ssh is masked where it really is). */
export function secretPaths(realHome: string, pencilHome: string): string[] {
  const out = new Set<string>();
  const homes = new Set([resolve(realHome), realLoose(realHome)]);
  const given = [...[...homes].flatMap((h) => HOME_SECRETS.map((rel) => join(h, rel))), resolve(pencilHome)];
  for (const p of given) {
    out.add(p);
    out.add(realLoose(p));
  }
  return [...out];
}

/** The directory kept for a PATH entry below home: a toolchain root whole, an install prefix for `<prefix>/bin`, else the entry itself. */
function toolchainDir(home: string, dir: string): string {
  const parts = relative(home, dir).split("/");
  if (TOOLCHAIN_ROOTS.has(parts[0]!)) return join(home, parts[0]!);
  // ~/.local/share/tool/bin has its lib/ beside it; a first-level prefix (~/.local) holds far more than one tool.
  if (basename(dir) === "bin" && parts.length >= 3) return dirname(dir);
  return dir;
}

/** The directory kept for a linked command's target: its outermost node_modules (the package and its dependencies), else as for PATH entries. */
function linkedDir(home: string, target: string): string {
  const parts = relative(home, target).split("/");
  if (TOOLCHAIN_ROOTS.has(parts[0]!)) return join(home, parts[0]!);
  const at = parts.indexOf("node_modules");
  if (at >= 0 && at < parts.length - 1) return join(home, ...parts.slice(0, at + 1));
  return toolchainDir(home, dirname(target));
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

function realLoose(p: string): string {
  try {
    return realPathLoose(resolve(p)).real;
  } catch {
    return resolve(p); // a link loop: nothing is reachable through it
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function linkTarget(p: string): string | null {
  try {
    return lstatSync(p).isSymbolicLink() ? realpathSync(p) : null;
  } catch {
    return null;
  }
}

/** Whether this system can run commands in the namespace sandbox (probed once per process). */
export function namespaceAvailable(): boolean {
  if (unshareArgs === undefined) unshareArgs = probeUnshare();
  return unshareArgs !== null;
}

let unshareArgs: string[] | null | undefined;

function chooseMode(choice: SandboxChoice): ShareMode {
  if (choice === "plain") return "plain";
  if (namespaceAvailable()) return "namespace";
  if (choice === "namespace") {
    throw new ToolError("The namespace sandbox is not available on this system (unshare with user namespaces failed), so the command did not run.");
  }
  return "plain";
}

function probeUnshare(): string[] | null {
  if (process.platform !== "linux" || !BASH) return null;
  // --map-current-user keeps the user's own uid inside (util-linux ≥ 2.38); older ones only map to root.
  for (const map of ["--map-current-user", "--map-root-user"]) {
    const args = ["--user", map, "--mount", "--propagation", "private"];
    const r = spawnSync("unshare", [...args, BASH, "-c", 'mount --bind "$1" "$1"', "probe", tmpdir()], { stdio: "ignore", timeout: 5000 });
    if (r.status === 0) return args;
  }
  return null;
}

const BASH = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"].find((p) => existsSync(p)) ?? null;
const SHELL = BASH ?? "/bin/sh";

/**
 * Runs inside the new namespace, before the command: shares, masks, the copy
 * placed at the workspace path, the real home covered (kept directories
 * re-bound from file descriptors opened before the cover), secrets masked,
 * then every reachable mount sealed read-only. Any failure before the command
 * starts exits 97 with a `pencil-sandbox:` line: the command never runs
 * half-confined.
 */
const NAMESPACE_SETUP = `
set -e
S=$1; W=$2; R=$3; E=$4; SH=$5; CMD=$6; H=$7; M=$8; shift 8
fail() { echo "${SETUP_MARKER} $*" >&2; exit ${SETUP_FAILED_EXIT}; }
declare -A inherited
while read -r id _; do inherited[$id]=1; done < /proc/self/mountinfo
mount --bind "$S" "$S" || fail "cannot bind the scratch directory"
binds=(); keeps=(); secrets=()
while [ $# -ge 3 ]; do
  case "$1" in
    bind) mount --bind "$2" "$3" || fail "cannot share $2"; binds+=("$3")
      case "$3" in "$W"/*) binds+=("$R/\${3#"$W"/}") ;; esac ;;
    maskf) mount --bind /dev/null "$2" || fail "cannot hide a file" ;;
    maskd) mount --bind "$E" "$2" || fail "cannot hide a directory" ;;
    keep) keeps+=("$2") ;;
    secret) secrets+=("$2") ;;
  esac
  shift 3
done
mount --rbind "$W" "$R" || fail "cannot place the scratch copy at the workspace path"
if [ -n "$H" ]; then
  fds=()
  for k in "\${keeps[@]}"; do
    exec {fd}<"$k" || fail "cannot open $k to keep it reachable"
    fds+=("$fd")
  done
  mount --bind "$M" "$H" || fail "cannot hide the home directory $H"
  for i in "\${!keeps[@]}"; do
    k=\${keeps[$i]}; fd=\${fds[$i]}
    mount -c --rbind "/proc/self/fd/$fd" "$k" || fail "cannot keep $k reachable"
    # An open descriptor would lead past the cover (openat "..") to the real home: none reaches the command.
    exec {fd}<&-
  done
fi
for x in "\${secrets[@]}"; do
  if [ -d "$x" ]; then mount --bind "$E" "$x" || fail "cannot hide $x"
  elif [ -e "$x" ]; then mount --bind /dev/null "$x" || fail "cannot hide $x"
  fi
done
mapfile -t lines < /proc/self/mountinfo
for line in "\${lines[@]}"; do
  read -r id _ _ _ mp opts _ <<< "$line"
  printf -v mp '%b' "$mp"
  case "$mp" in "$S"|"$R"|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;; esac
  case ",$opts," in *,ro,*) continue ;; esac
  if [ -n "\${inherited[$id]}" ]; then
    # An inherited mount below one of ours is out of the command's reach: nothing to seal (nor can it be named).
    covered=
    for c in "$S" "$R" \${H:+"$H"} "\${secrets[@]}"; do
      case "$mp" in "$c"|"$c"/*) covered=1 ;; esac
    done
    [ -z "$covered" ] || continue
  fi
  if ! mount -o "remount,bind,ro\${opts#rw}" "$mp" 2>/dev/null; then
    # A mount point this setup cannot reach by path, the command (same user, fewer rights) cannot reach either.
    [ -e "$mp" ] || continue
    fail "cannot make $mp read-only"
  fi
done
for b in "\${binds[@]}" "\${keeps[@]}" \${H:+"$H"}; do
  case "$b" in "$S"|"$R") continue ;; esac
  if [ -w "$b" ]; then fail "$b could not be made read-only"; fi
done
cd "$R" || fail "cannot enter the workspace path $R"
exec 2>&1
exec "$SH" -c "$CMD"
`;

interface RunOutcome extends CommandOutcome {
  /** The sandbox setup's complaint when the command never started; null otherwise. */
  setupFailure: string | null;
}

function runIn(s: Scratch, command: string, options: RunCommandOptions, hiding: HomeHiding | null, signal?: AbortSignal): Promise<RunOutcome> {
  const env = commandEnv(options.parentEnv ?? process.env, s, options.extraEnv);
  let file: string;
  let args: string[];
  if (s.share === "namespace") {
    // Triples (kind, path, path) read by NAMESPACE_SETUP; masks come after the binds they lie in.
    const items: string[] = [];
    for (const m of s.mounts) items.push("bind", m.source, m.target);
    for (const sd of s.shared) for (const m of sd.masks) items.push(m.dir ? "maskd" : "maskf", m.path, "-");
    for (const k of hiding?.keeps ?? []) items.push("keep", k, "-");
    for (const x of hiding?.secrets ?? []) items.push("secret", x, "-");
    file = "unshare";
    const cover = hiding?.cover ?? "";
    const mask = join(s.root, "home-mask");
    if (hiding?.cover) {
      // The empty home, with the mount points of the kept directories made here (one process less each in the namespace).
      mkdirSync(mask, { mode: 0o755 });
      for (const k of hiding.keeps) mkdirSync(join(mask, relative(hiding.cover, k)), { recursive: true, mode: 0o755 });
    }
    args = [...unshareArgs!, BASH!, "-c", NAMESPACE_SETUP, "pencil-sandbox", s.root, s.dir, s.ws.root, s.empty, SHELL, command, cover, mask, ...items];
  } else {
    file = SHELL;
    args = ["-c", 'cd "$1" && exec 2>&1 && exec "$2" -c "$3"', "pencil-run", s.dir, SHELL, command];
  }
  const cap = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const out = new Tail(cap);
    const setupErr = new Tail(4096);
    let timedOut = false;
    let aborted = false;
    const child = spawn(file, args, { cwd: s.root, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    // detached makes the shell a process-group leader: one kill reaches everything it started.
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout!.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr!.on("data", (chunk: Buffer) => {
      out.push(chunk);
      setupErr.push(chunk);
    });
    child.on("error", (error) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      reject(new ToolError(`The command could not be started (${error.message}).`));
    });
    child.on("exit", (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      // Background jobs the command left behind must not outlive it (nor write into the copy while it is diffed).
      killGroup();
      const finish = () => {
        child.stdout!.destroy();
        child.stderr!.destroy();
        const setupText = setupErr.text();
        const marker = setupText.indexOf(SETUP_MARKER);
        resolve({
          exitCode: code,
          signal: sig,
          timedOut,
          aborted,
          durationMs: performance.now() - started,
          output: out.text(),
          keptBytes: Math.min(out.total, cap),
          outputBytes: out.total,
          setupFailure: s.share === "namespace" && code === SETUP_FAILED_EXIT && marker !== -1 ? setupText.slice(marker + SETUP_MARKER.length).trim().split("\n")[0]! : null,
        });
      };
      // Let the pipes drain, but do not wait for a process that escaped the group and keeps them open.
      const grace = setTimeout(finish, 200);
      child.once("close", () => {
        clearTimeout(grace);
        finish();
      });
    });
  });
}

/** Keeps the last `cap` bytes of a stream and counts the rest. */
class Tail {
  private chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.kept - this.chunks[0]!.length >= this.cap) this.kept -= this.chunks.shift()!.length;
  }

  text(): string {
    let bytes = Buffer.concat(this.chunks);
    if (bytes.length > this.cap) bytes = bytes.subarray(bytes.length - this.cap);
    // A cut may land inside a UTF-8 sequence: start at the next character boundary.
    let start = 0;
    if (this.total > bytes.length) while (start < bytes.length && start < 4 && (bytes[start]! & 0xc0) === 0x80) start++;
    return bytes.subarray(start).toString("utf8");
  }
}

function report(command: string, s: Scratch, outcome: RunOutcome, ctx: ToolContext, pencilHome: string): string {
  const lines: string[] = [`$ ${command}`];
  const secs = (outcome.durationMs / 1000).toFixed(outcome.durationMs < 10_000 ? 2 : 1);
  if (outcome.timedOut) {
    lines.push(`Timed out after ${secs} s: the command and every process it started were killed.`);
  } else if (outcome.aborted) {
    lines.push(`Cancelled after ${secs} s: the command and every process it started were killed.`);
  } else if (outcome.exitCode !== null) {
    lines.push(`Exit code ${outcome.exitCode} after ${secs} s.`);
  } else {
    lines.push(`Killed by signal ${outcome.signal ?? "?"} after ${secs} s.`);
  }
  let output = outcome.output.replace(/\n$/, "");
  // Plain mode runs at the scratch path; show the workspace's own paths to the model.
  if (s.share === "plain") output = output.split(s.dir).join(s.ws.root);
  if (outcome.outputBytes === 0) lines.push("Output: (none)");
  else if (outcome.outputBytes > outcome.keptBytes) {
    lines.push(`Output (the last ${size(outcome.keptBytes)} of ${size(outcome.outputBytes)}; the first ${size(outcome.outputBytes - outcome.keptBytes)} were cut):`);
    lines.push(output);
  } else {
    lines.push("Output:");
    lines.push(output);
  }
  lines.push(...s.notes);
  if (s.hidden > 0) lines.push(`Note: ${s.hidden === 1 ? "1 entry" : `${s.hidden} entries`} that the policy keeps private (e.g. .env files) ${s.hidden === 1 ? "was" : "were"} left out of the scratch copy.`);
  const leaks = sharedLeaks(s);
  if (leaks.length > 0) {
    lines.push(
      `WARNING: the command changed ${leaks.length} ${leaks.length === 1 ? "entry" : "entries"} in shared directories of the REAL workspace (no sandbox on this system, so writes through them reached the disk unreviewed; they are not staged):`,
      ...leaks.slice(0, NOT_STAGED_CAP).map((l) => `  ${l.change}: ${l.rel}`),
      ...(leaks.length > NOT_STAGED_CAP ? [`  …and ${leaks.length - NOT_STAGED_CAP} more`] : []),
      "Tell the user; do not run commands that write into dependency directories.",
    );
  }
  if (outcome.timedOut || outcome.aborted) {
    lines.push("Its file effects were discarded: nothing was staged. Run a narrower or faster command.");
    return lines.join("\n");
  }
  lines.push(...stageChanges(s, diffScratch(s, ctx.limits.maxFileBytes), ctx, pencilHome));
  return lines.join("\n");
}

/** Stages what may be staged; returns the `Staged …` and `Not staged …` lines. */
function stageChanges(s: Scratch, changes: ScratchChange[], ctx: ToolContext, pencilHome: string): string[] {
  const staged: string[] = [];
  const refused: string[] = [];
  let gitChanges = 0;
  const origin = originOf(ctx, "run_command");
  const refusalOf = writeJudge(ctx, pencilHome);
  // Deletions first, so a file replaced by a directory (or back) stages cleanly.
  const ordered = [...changes.filter((c) => c.change === "delete"), ...changes.filter((c) => c.change !== "delete")];
  for (const c of ordered) {
    if (c.rel === ".git" || c.rel.startsWith(".git/")) {
      gitChanges++;
      continue;
    }
    const real = join(s.ws.root, c.rel);
    const why = whyNotStaged(s, c, real, ctx, refusalOf);
    if (why) {
      refused.push(`Not staged: ${c.rel}, because ${why}`);
      continue;
    }
    try {
      if (c.change === "delete") {
        if (ctx.fs.stat(real)?.kind !== "file") continue;
        ctx.fs.remove(real, { origin });
        staged.push(`Staged delete: ${c.rel}`);
        continue;
      }
      const before = ctx.fs.stat(real);
      ctx.fs.writeBytes(real, c.bytes!, { mode: c.mode!, origin });
      if (!before) staged.push(`Staged create: ${c.rel}`);
      else if (before.mode !== c.mode) staged.push(`Staged edit: ${c.rel} (mode ${before.mode.toString(8)} → ${c.mode!.toString(8)})`);
      else staged.push(`Staged edit: ${c.rel}`);
    } catch (error) {
      refused.push(`Not staged: ${c.rel}, because ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const lines: string[] = [];
  if (staged.length === 0 && refused.length === 0 && gitChanges === 0) return ["No file changes."];
  lines.push(...staged.slice(0, LIST_CAP));
  if (staged.length > LIST_CAP) lines.push(`…and ${staged.length - LIST_CAP} more staged changes.`);
  lines.push(...refused.slice(0, NOT_STAGED_CAP));
  if (refused.length > NOT_STAGED_CAP) lines.push(`…and ${refused.length - NOT_STAGED_CAP} more changes not staged.`);
  if (gitChanges > 0) {
    lines.push(`Not staged: ${gitChanges} ${gitChanges === 1 ? "change" : "changes"} inside .git, because git metadata is never changed by commands (the user runs git operations).`);
  }
  return lines;
}

function whyNotStaged(s: Scratch, c: ScratchChange, real: string, ctx: ToolContext, refusalOf: WriteRefusal): string | null {
  const shared = s.shared.find((sd) => c.rel === sd.rel || c.rel.startsWith(sd.rel + "/"));
  if (shared) return `it is inside ${shared.rel}, a dependency directory shared read-only with commands.`;
  const refusal = refusalOf(real);
  if (refusal) return refusal;
  if (!ctx.visible(real)) return "the policy keeps that path private.";
  if (c.entry === "link") return "symbolic links are not staged; create the file it should point to instead.";
  if (c.entry === "other") return "special files (sockets, FIFOs, devices) are not staged.";
  if (!s.rules.admitsPath(real, "file", s.ws.root)) return ".gitignore ignores it (build output or cache).";
  if (c.change !== "delete" && !c.bytes) {
    return `it is ${c.size ?? "?"} bytes, over the ${ctx.limits.maxFileBytes}-byte limit per file.`;
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
function builtinPolicy(ctx: ToolContext, pencilHome: string): Policy {
  return compilePolicy({ workspaceRoot: ctx.ws.root, home: ctx.ws.home, pencilHome, rules: [] });
}

function pencilHomeOf(options: RunCommandOptions): string {
  return options.pencilHome || process.env.PENCIL_HOME || join(homedir(), ".pencil");
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
