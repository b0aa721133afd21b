import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { z } from "zod";
import { compilePolicy, decide, HOME_CREDENTIALS, type Policy } from "../policy.ts";
import { diffScratch, disposeScratch, makeScratch, ScratchError, sharedLeaks, type Scratch, type ScratchChange, type ShareMode } from "../scratch.ts";
import { isInside, realPathLoose } from "../workspace.ts";
import { originOf } from "./staging-helpers.ts";
import { ToolError, type PencilTool, type ToolContext } from "./tool.ts";

/**
 * Where the command runs.
 * - `namespace` (Linux with unprivileged user namespaces and util-linux's
 *   `setpriv`): private user, mount, IPC and network namespaces. The scratch copy
 *   is mounted at the workspace's own path, shared directories are
 *   bind-mounted read-only, the real home directory and the host's
 *   /tmp, /var/tmp, /run and /dev/shm are covered by empty ones (the toolchain
 *   on PATH, the workspace and the scratch copy stay reachable; the temporary
 *   directories are fresh and writable), credentials, PENCIL_HOME, Pencil's
 *   own .env and host sockets are masked, every other mount is remounted
 *   read-only (/proc, /sys and /dev included), there is no network unless
 *   `network` is set, and the command runs with every capability dropped and
 *   no_new_privs, so it cannot unmount or remount any of that. Writes can
 *   reach only the scratch copy and the private temporary directories,
 *   whatever path the command uses. If any of that fails the command does not
 *   run (a ToolError says why).
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
  /** Extra variables for the command; any whose name looks secret or leads to a host socket (SSH_AUTH_SOCK, DISPLAY…) is dropped. */
  extraEnv?: Record<string, string>;
  /** Directory names always shared instead of copied (default DEPENDENCY_DIRS). */
  shareNames?: readonly string[];
  /** Ignored directories with more entries than this are shared (default 1000). */
  shareOver?: number;
  /** The user's real home directory, hidden from the command in the namespace sandbox (default os.homedir()). */
  realHome?: string;
  /** Pencil's state directory, never visible to the command (default $PENCIL_HOME, else ~/.pencil). */
  pencilHome?: string;
  /**
   * Namespace sandbox: let the command use the host's network (default false:
   * a private network with only its own loopback, so no internet, no local
   * services, no cloud metadata endpoint). With it, host services listening on
   * 127.0.0.1 and abstract unix sockets are reachable too.
   */
  network?: boolean;
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

/** Output that says a command needed the network (resolver, connect and package-manager errors). */
const NETWORK_FAILURE = /Could not resolve host|Temporary failure in name resolution|Network is unreachable|ENOTFOUND|EAI_AGAIN|ENETUNREACH|getaddrinfo|Name or service not known/i;

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
      `No stdin; ${options.network ? "" : "no network access (installs and downloads fail: ask the user to allow network access or to run them); "}a ${Math.round((options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000)} s timeout; secrets (.env files, API keys in the environment) are not available. ` +
      "You get the exit code and the end of the output.",
    inputSchema: input,
    claims: () => [],
    runCommand: ({ command }) => command,
    // A `namespace` choice never runs unconfined (it refuses instead), so only `plain` and an `auto` without namespaces are unsandboxed.
    sandboxed: () => {
      const choice = options.sandbox ?? "auto";
      return choice === "namespace" || (choice === "auto" && sandboxAvailable());
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
  // The built-in read denies even when a caller forgot them, and credentials below home (the workspace may be the
  // home directory itself): never in the copy, masked where the sandbox would show them.
  const denied = (real: string) => decide(builtins, { tool: "run_command", access: "read", real }).decision === "deny" || secrets.some((p) => isInside(p, real));
  // Plus the session's visibility for the copy (it says no to everything outside the workspace, so it cannot judge kept toolchains).
  const visible = (real: string) => ctx.visible(real) && !denied(real);
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
    const hiding =
      mode === "namespace"
        ? planHiding({
            realHome,
            pencilHome,
            wsRoot: ctx.ws.root,
            scratchRoot: s.root,
            path: commandPath(options.parentEnv ?? process.env),
            env: options.parentEnv ?? process.env,
            hidden: denied,
          })
        : null;
    const outcome = await runIn(s, command, options, hiding, ctx.signal);
    if (outcome.setupFailure !== null) {
      // Never a silent downgrade to an unconfined run: the model (and through it the user) learns why nothing ran.
      throw new ToolError(
        `The sandbox could not be set up (${outcome.setupFailure}), so the command did not run. Tell the user: unprivileged user namespaces, bind mounts and setpriv must work for commands to run sandboxed (pencil doctor checks).`,
      );
    }
    const text = report(command, s, outcome, ctx, pencilHome, options.network === true);
    // Said, not swallowed: a copy left behind holds the workspace's files in the temp directory.
    return disposeScratch(s) ? text : `${text}\nWARNING: the scratch copy ${s.root} could not be removed completely; tell the user to delete it.`;
  } catch (error) {
    disposeScratch(s);
    throw error;
  }
}

/** True for environment variable names that may hold credentials: never passed to commands. */
export function looksSecret(name: string): boolean {
  const upper = name.toUpperCase();
  if (upper === "PWD" || upper === "OLDPWD") return false;
  if (upper.startsWith("TELEGRAM_") || upper.startsWith("INSFORGE_") || upper.endsWith("_API_KEY")) return true;
  return /KEY|TOKEN|SECRET|PASSW|PWD|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE/.test(upper);
}

/**
 * True for environment variable names that lead to a host service's socket
 * or session (ssh-agent, D-Bus, docker, X11, Wayland, tmux, screen, Kerberos):
 * never passed to commands, which could drive those services outside any sandbox.
 */
export function namesHostSocket(name: string): boolean {
  const upper = name.toUpperCase();
  if (/(^|_)(SOCK|SOCKET)$/.test(upper) || /^(SSH|GPG|DBUS|DOCKER|PODMAN|TMUX|WAYLAND|KRB5|PULSE)_/.test(upper)) return true;
  return ["DISPLAY", "XAUTHORITY", "ICEAUTHORITY", "STY", "TMUX", "XDG_RUNTIME_DIR", "VSCODE_IPC_HOOK_CLI"].includes(upper);
}

/** The command's environment: a minimal allow-list, HOME and TMPDIR inside the scratch, nothing that looks secret or leads to a host socket. */
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
  for (const [name, value] of Object.entries(extra)) if (!looksSecret(name) && !namesHostSocket(name)) env[name] = value;
  return env;
}

function commandPath(parent: Record<string, string | undefined>): string {
  return parent.PATH || "/usr/local/bin:/usr/bin:/bin";
}

/**
 * Directories right below home that hold one whole toolchain and no
 * credentials: kept whole when PATH leads into them (a pyenv shim needs the
 * versions, npm under nvm its lib/).
 */
const TOOLCHAIN_ROOTS: ReadonlySet<string> = new Set([".nvm", ".pyenv", ".rbenv", ".nodenv", ".goenv", ".bun", ".volta", ".deno", ".asdf", ".sdkman"]);

/**
 * System directories the namespace sandbox covers with empty ones, because
 * host services listen there on sockets a command could drive (tmux, X11,
 * ssh-agent, D-Bus, systemd, docker) and other programs keep temporary files
 * there. The writable ones get fresh space private to the run.
 */
const SYSTEM_COVERS: readonly { path: string; writable: boolean; tmpfs: boolean }[] = [
  { path: "/tmp", writable: true, tmpfs: false },
  { path: "/var/tmp", writable: true, tmpfs: false },
  { path: "/run", writable: false, tmpfs: false },
  { path: "/var/run", writable: false, tmpfs: false },
  { path: "/dev/shm", writable: true, tmpfs: true },
];

/** Pencil's own install directory (the repository root): its `.env` holds the API keys commands never get. */
export const INSTALL_DIR: string = resolve(import.meta.dir, "../..");

/** A directory the namespace sandbox hides behind an empty one before the command runs. */
export interface Cover {
  /** The directory covered (a real path). */
  path: string;
  /** What covers it: `dir`, an empty directory prepared in the scratch; `tmpfs`, a fresh in-memory file system. */
  with: "dir" | "tmpfs";
  /** True for temporary space the command may write (/tmp, /var/tmp, /dev/shm): empty, private to the run, discarded with it; false: read-only. */
  writable: boolean;
  /** Directories below `path` bound back (read-only, except the workspace and scratch copy): the toolchain on PATH, the workspace, the scratch directory; none inside another. */
  keeps: string[];
  /** Where mounts land inside the cover (its keeps and the covers right inside it): directories to make in it first. */
  mountPoints: string[];
}

/** How the namespace sandbox hides the host from a command. */
export interface Hiding {
  /** Outermost first: a cover inside another comes after it. */
  covers: Cover[];
  /**
   * Paths masked (by an empty directory or /dev/null) wherever they are still
   * reachable after the covers: HOME_CREDENTIALS and PENCIL_HOME (as given and
   * resolved), Pencil's own .env files, private files a kept directory would
   * show, and host sockets (ssh-agent, docker, /run/user/<uid>).
   */
  secrets: string[];
}

/** What planHiding needs. */
export interface HidingInput {
  /** The user's real home directory. */
  realHome: string;
  /** Pencil's state directory. */
  pencilHome: string;
  /** Real path of the workspace root. */
  wsRoot: string;
  /** The scratch directory (the command's HOME and TMPDIR are in it). */
  scratchRoot: string;
  /** The command's PATH: its directories inside covered ones are kept reachable. */
  path: string;
  /** Pencil's install directory, whose .env files are masked (default INSTALL_DIR). */
  installDir?: string;
  /** The environment Pencil runs in: its SSH_AUTH_SOCK, DOCKER_HOST and XDG_RUNTIME_DIR name sockets to mask (default process.env). */
  env?: Record<string, string | undefined>;
  /** True for a real path the policy never lets be read (a deny, not an ask); such entries of kept directories and of the install directory are masked (default: the built-in read denies, e.g. .env files). */
  hidden?: (real: string) => boolean;
  /** Paths of the host's bound unix sockets; those the covers leave reachable are masked (default hostUnixSockets()). */
  unixSockets?: readonly string[];
}

/** System files that hold other users' secrets, masked always (a Pencil run as root could read them). */
const SYSTEM_SECRETS: readonly string[] = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/ssl/private"];

/** Paths of the unix sockets bound on the host (its network namespace), from /proc/net/unix; abstract ones (no path) left out. */
export function hostUnixSockets(table = "/proc/net/unix"): string[] {
  let text: string;
  try {
    text = readFileSync(table, "utf8");
  } catch {
    return [];
  }
  const out = new Set<string>();
  for (const line of text.split("\n").slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path: the path is the rest of the line.
    const path = /^\s*\S+:\s+(?:\S+\s+){5}\S+\s+(\/.*)$/.exec(line)?.[1];
    if (path) out.add(path);
  }
  return [...out];
}

/**
 * Plans what the namespace sandbox hides: the real home and the system
 * directories of SYSTEM_COVERS are covered, with what the command needs bound
 * back (the toolchain on PATH, the workspace, the scratch directory, the
 * resolver configuration), and secrets masked wherever they stay reachable.
 */
export function planHiding(input: HidingInput): Hiding {
  const hidden = input.hidden ?? builtinHidden(input);
  const secrets = new Set(secretPaths(input.realHome, input.pencilHome));
  const ws = input.wsRoot;
  const scratch = realOrNull(input.scratchRoot) ?? input.scratchRoot;
  const home = realOrNull(input.realHome);
  const covers: Cover[] = [];
  const addCover = (path: string | null, writable: boolean, tmpfs: boolean, mustBeDir: boolean) => {
    // `/` cannot be covered; one inside the workspace is already stood over by the copy, which holds no secrets.
    if (path === null || path === "/" || isInside(ws, path) || covers.some((c) => c.path === path)) return;
    // A home that is not a directory is still "covered": the bind fails and the command does not run, rather than run with it shown.
    if (mustBeDir && !isDir(path)) return;
    covers.push({ path, with: tmpfs ? "tmpfs" : "dir", writable, keeps: [], mountPoints: [] });
  };
  addCover(home, false, false, false);
  // root's home holds root's keys; shown to a command only when Pencil runs as root with another home.
  addCover(realOrNull("/root"), false, false, true);
  for (const sc of SYSTEM_COVERS) addCover(realOrNull(sc.path), sc.writable, sc.tmpfs, true);
  covers.sort((a, b) => a.path.length - b.path.length);
  // The innermost cover strictly above `p`, if any.
  const coverOf = (p: string): Cover | undefined => {
    let found: Cover | undefined;
    for (const c of covers) if (c.path !== p && isInside(c.path, p) && (!found || c.path.length > found.path.length)) found = c;
    return found;
  };

  const wanted: string[] = [ws, scratch];
  // Name resolution must keep working for commands given network access (/etc/resolv.conf often leads into /run).
  const resolver = realOrNull("/etc/resolv.conf");
  if (resolver !== null) wanted.push(dirname(resolver));
  /** Pairs (kept directory, directory of a linked command's target): every directory between them is checked for private files. */
  const linkPaths: [string, string][] = [];
  for (const entry of input.path.split(":")) {
    if (!isAbsolute(entry)) continue;
    const lexical = resolve(entry);
    const lexicalCover = coverOf(lexical);
    // A PATH entry reached through a link in a covered directory (NixOS's /run/current-system): that link is kept, as a directory.
    if (lexicalCover) {
      const first = join(lexicalCover.path, relative(lexicalCover.path, lexical).split("/")[0]!);
      if (isLink(first)) wanted.push(first);
    }
    const dir = realOrNull(entry);
    if (dir === null || !isDir(dir)) continue;
    const base = coverOf(dir);
    // PATH directories in the open (/usr/bin) need nothing kept; listing them would cost more than the run.
    if (!base) continue;
    wanted.push(toolchainDir(base.path, dir, base.path === home));
    // Linked commands (npm -g, npm link, bun add -g, pyenv's bin) point elsewhere: keep what they point into.
    for (const name of listDir(dir)) {
      const target = linkTarget(join(dir, name));
      const at = target === null ? undefined : coverOf(target);
      if (target === null || !at) continue;
      const kept = linkedDir(at.path, target, at.path === home);
      wanted.push(kept);
      linkPaths.push([kept, dirname(target)]);
    }
  }
  const secretList = [...secrets];
  for (const k of [...new Set(wanted)].sort((a, b) => a.length - b.length)) {
    const c = coverOf(k);
    // A keep inside a secret would show it; a keep inside another one comes with it.
    if (!c || secretList.some((x) => isInside(x, k)) || c.keeps.some((o) => isInside(o, k))) continue;
    c.keeps.push(k);
  }
  for (const c of covers) {
    // A home that is not a directory gets no mount point: its cover then fails, as it must.
    const inner = covers.filter((o) => coverOf(o.path) === c && !c.keeps.some((k) => isInside(k, o.path)) && isDir(o.path)).map((o) => o.path);
    c.mountPoints = [...c.keeps, ...inner];
  }

  // Private files a kept directory would show (the .env of a linked checkout, say), and Pencil's own.
  const scanned = new Set<string>();
  const scan = (dir: string) => {
    if (scanned.has(dir)) return;
    scanned.add(dir);
    for (const name of listDir(dir)) {
      const p = join(dir, name);
      if (hidden(p)) secrets.add(p);
    }
  };
  const installDir = realOrNull(input.installDir ?? INSTALL_DIR);
  if (installDir !== null) scan(installDir);
  const kept = covers.flatMap((c) => c.keeps);
  for (const k of kept) if (k !== ws && k !== scratch) scan(k);
  for (const [k, to] of linkPaths) {
    if (!kept.some((o) => isInside(o, k))) continue;
    for (let d = to; isInside(k, d); d = dirname(d)) {
      scan(d);
      if (d === k) break;
    }
  }

  // Sockets of host services outside the covers: their directory when nothing the command needs lies in it, else the socket itself.
  const env = input.env ?? process.env;
  const needed = [ws, scratch, ...kept, ...covers.map((c) => c.path)];
  const maskSocket = (socket: string | undefined) => {
    if (!socket || !isAbsolute(socket)) return;
    const real = realLoose(socket);
    const dir = dirname(real);
    secrets.add(dir !== "/" && !needed.some((n) => isInside(dir, n)) ? dir : real);
  };
  maskSocket(env.SSH_AUTH_SOCK);
  const dockerHost = env.DOCKER_HOST;
  if (dockerHost?.startsWith("unix://")) maskSocket(dockerHost.slice("unix://".length));
  for (const p of ["/run/docker.sock", "/var/run/docker.sock", ...SYSTEM_SECRETS]) secrets.add(p);
  // Every other bound socket the covers leave reachable (outside them, or inside a kept directory) is masked itself.
  const hiddenByCover = (p: string) => covers.some((c) => isInside(c.path, p)) && !kept.some((k) => isInside(k, p));
  for (const socket of input.unixSockets ?? hostUnixSockets()) {
    if (isInside(ws, socket) || isInside(scratch, socket)) continue; // the copy stands over the workspace; the scratch holds the run's own
    const real = realLoose(socket);
    if (!hiddenByCover(socket) || !hiddenByCover(real)) secrets.add(real);
  }
  const uid = process.getuid?.();
  for (const p of [uid === undefined ? null : `/run/user/${uid}`, env.XDG_RUNTIME_DIR]) {
    if (!p || !isAbsolute(p)) continue;
    const real = realLoose(p);
    if (real !== "/" && !needed.some((n) => isInside(real, n))) secrets.add(real);
  }
  return { covers, secrets: [...secrets] };
}

/** HOME_CREDENTIALS below `realHome`, and `pencilHome`: each as given and as its real path (a linked ~/.ssh is masked where it really is). */
export function secretPaths(realHome: string, pencilHome: string): string[] {
  const out = new Set<string>();
  const homes = new Set([resolve(realHome), realLoose(realHome)]);
  const given = [...[...homes].flatMap((h) => HOME_CREDENTIALS.map((rel) => join(h, rel))), resolve(pencilHome)];
  for (const p of given) {
    out.add(p);
    out.add(realLoose(p));
  }
  return [...out];
}

/** The built-in read denies (.env files, credentials, PENCIL_HOME) as a predicate on real paths. */
function builtinHidden(input: HidingInput): (real: string) => boolean {
  const policy = compilePolicy({ workspaceRoot: input.wsRoot, home: input.realHome, pencilHome: input.pencilHome, rules: [] });
  return (real) => decide(policy, { tool: "run_command", access: "read", real }).decision === "deny";
}

/** The directory kept for a PATH entry below `base`: a toolchain root (below home) whole, an install prefix for `<prefix>/bin`, else the entry itself. */
function toolchainDir(base: string, dir: string, isHome: boolean): string {
  const parts = relative(base, dir).split("/");
  if (isHome && TOOLCHAIN_ROOTS.has(parts[0]!)) return join(base, parts[0]!);
  // ~/.local/share/tool/bin has its lib/ beside it; a first-level prefix (~/.local) holds far more than one tool.
  if (basename(dir) === "bin" && parts.length >= 3) return dirname(dir);
  return dir;
}

/** The directory kept for a linked command's target: its outermost node_modules (the package and its dependencies), else as for PATH entries. */
function linkedDir(base: string, target: string, isHome: boolean): string {
  const parts = relative(base, target).split("/");
  if (isHome && TOOLCHAIN_ROOTS.has(parts[0]!)) return join(base, parts[0]!);
  const at = parts.indexOf("node_modules");
  if (at >= 0 && at < parts.length - 1) return join(base, ...parts.slice(0, at + 1));
  return toolchainDir(base, dirname(target), isHome);
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

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
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

/**
 * Whether commands can run in the namespace sandbox here: unprivileged user,
 * mount and network namespaces, bind mounts, and `setpriv` to drop every
 * capability before the command starts (probed once per process, then cached).
 */
export function sandboxAvailable(): boolean {
  if (unshareArgs === undefined) unshareArgs = probeUnshare();
  return unshareArgs !== null;
}

/** The same as sandboxAvailable (its former name). */
export const namespaceAvailable: () => boolean = sandboxAvailable;

let unshareArgs: string[] | null | undefined;

function chooseMode(choice: SandboxChoice): ShareMode {
  if (choice === "plain") return "plain";
  if (sandboxAvailable()) return "namespace";
  if (choice === "namespace") {
    throw new ToolError(
      "The namespace sandbox is not available on this system (unshare with user namespaces, or setpriv from util-linux, failed), so the command did not run.",
    );
  }
  return "plain";
}

/** The host devices the namespace sandbox's private /dev shows: none reaches a terminal, disk or console the owner uses. */
const DEV_NODES: readonly string[] = ["null", "zero", "full", "random", "urandom", "tty"];

/** Lays out the private /dev in `dir`: empty files where the runner binds DEV_NODES, /dev/fd and the std links, empty shm and pts. */
function makeDevDir(dir: string): void {
  mkdirSync(dir, { mode: 0o755 });
  for (const d of ["shm", "pts"]) mkdirSync(join(dir, d), { mode: 0o755 });
  for (const name of DEV_NODES) if (existsSync(`/dev/${name}`)) writeFileSync(join(dir, name), "", { mode: 0o666 });
  symlinkSync("/proc/self/fd", join(dir, "fd"));
  ["stdin", "stdout", "stderr"].forEach((name, fd) => symlinkSync(`/proc/self/fd/${fd}`, join(dir, name)));
}

/** Drops every capability (the bounding set too) and sets no_new_privs: nothing the command runs can mount, unmount or regain privileges. */
const DROP_PRIVILEGES = ["--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"];

/** The probe: the shell is init of its pid namespace, a bind and a tmpfs mount work before the drop, and an unmount fails after it. */
const PROBE = `[ "$$" = 1 ] && mount --bind "$1" "$1" && mount -t tmpfs pencil-probe "$1" && exec "$2" ${DROP_PRIVILEGES.join(" ")} "$3" -c '! umount "$1" 2>/dev/null' probe "$1"`;

function probeUnshare(): string[] | null {
  if (process.platform !== "linux" || !BASH || !SETPRIV) return null;
  // --map-current-user keeps the user's own uid inside (util-linux ≥ 2.38); older ones only map to root.
  for (const map of ["--map-current-user", "--map-root-user"]) {
    // --ipc: the user's System V shared memory, semaphores and message queues stay out of reach.
    // --pid --fork --kill-child --mount-proc: the command's shell is init of a private pid namespace, so when it exits (or
    // is killed) the kernel kills every process left in it, setsid'd ones included, before unshare returns; no survivor
    // can touch the copy while it is diffed.
    const args = ["--user", map, "--mount", "--propagation", "private", "--ipc", "--pid", "--fork", "--kill-child", "--mount-proc"];
    const r = spawnSync("unshare", [...args, "--net", BASH, "-c", PROBE, "probe", tmpdir(), SETPRIV, BASH], { stdio: "ignore", timeout: 5000 });
    if (r.status === 0) return args;
  }
  return null;
}

/** The first of `names` that exists as an absolute path. */
function firstExisting(names: string[]): string | null {
  return names.find((p) => existsSync(p)) ?? null;
}

const BASH = firstExisting(["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"]);
const SHELL = BASH ?? "/bin/sh";
const SETPRIV = firstExisting(["/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv", "/sbin/setpriv", "/usr/local/bin/setpriv"]);
const IP = firstExisting(["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]);

/**
 * Runs inside the new namespaces, before the command: the private network's
 * loopback brought up (best effort), nested user namespaces forbidden, shares
 * and masks, the copy placed at the workspace path, the covers laid (kept
 * directories re-bound from file descriptors opened before any cover),
 * secrets masked, every reachable mount but the copy and the private
 * temporary space sealed read-only (/proc, /sys and /dev too), and finally
 * every capability dropped by setpriv, so the command cannot undo any of it.
 * Any failure before the command starts exits 97 with a `pencil-sandbox:`
 * line: the command never runs half-confined.
 */
const NAMESPACE_SETUP = `
set -e
S=$1; W=$2; R=$3; E=$4; SH=$5; CMD=$6; SP=$7; IP=$8; shift 8
fail() { echo "${SETUP_MARKER} $*" >&2; exit ${SETUP_FAILED_EXIT}; }
# A read-only bind in one mount(8) run (each run costs milliseconds; the seal below then skips it). Where the source's
# locked flags make that refuse, a plain bind, which the seal below makes read-only.
robind() { mount --bind -o ro "$1" "$2" 2>/dev/null || mount --bind "$1" "$2"; }
declare -A inherited
while read -r id _; do inherited[$id]=1; done < /proc/self/mountinfo
# A nested user namespace starts with every capability again: allow none (/proc is sealed read-only below in any case).
{ echo 0 > /proc/sys/user/max_user_namespaces; } 2>/dev/null || true
# The private network's own loopback (the host's stays out of reach): local test servers keep working.
if [ -n "$IP" ]; then "$IP" link set lo up 2>/dev/null || true; fi
mount --bind "$S" "$S" || fail "cannot bind the scratch directory"
binds=(); secrets=(); covers=(); sources=(); writable=(); rocovers=(); keeps=(); kcover=(); points=(); pcover=()
while [ $# -ge 3 ]; do
  case "$1" in
    bind) robind "$2" "$3" || fail "cannot share $2"; binds+=("$3")
      case "$3" in "$W"/*) binds+=("$R/\${3#"$W"/}") ;; esac ;;
    maskf) robind /dev/null "$2" || fail "cannot hide a file" ;;
    maskd) robind "$E" "$2" || fail "cannot hide a directory" ;;
    cover) covers+=("$2"); sources+=("$3"); rocovers+=("$2") ;;
    wcover) covers+=("$2"); sources+=("$3"); writable+=("$2") ;;
    keep) keeps+=("$2"); kcover+=("$3") ;;
    mkpt) points+=("$2"); pcover+=("$3") ;;
    secret) secrets+=("$2") ;;
  esac
  shift 3
done
mount --rbind "$W" "$R" || fail "cannot place the scratch copy at the workspace path"
# A /dev of its own: the owner's terminals (/dev/pts, /dev/tty1), disks and consoles stay out of reach (a read-only
# mount does not stop writes to a device). Prepared in the scratch directory (directories, links, empty files as mount
# points), the host's harmless devices bound in, then bound over /dev.
D="$S/dev"
for d in "$D"/*; do
  [ -f "$d" ] || continue
  robind "/dev/\${d##*/}" "$d" || fail "cannot provide /dev/\${d##*/}"
done
mount --rbind "$D" /dev || fail "cannot place the private /dev"
# Everything bound after the first cover is opened before it: a later cover's source may lie under an earlier one.
fds=(); sfds=()
for k in "\${keeps[@]}"; do
  exec {fd}<"$k" || fail "cannot open $k to keep it reachable"
  fds+=("$fd")
done
for src in "\${sources[@]}"; do
  fd=-
  if [ "$src" != tmpfs ]; then exec {fd}<"$src" || fail "cannot open $src"; fi
  sfds+=("$fd")
done
for c in "\${!covers[@]}"; do
  C=\${covers[$c]}; src=\${sources[$c]}; fd=\${sfds[$c]}
  if [ "$src" = tmpfs ]; then
    mount -t tmpfs -o mode=1777,nosuid,nodev pencil-tmp "$C" || fail "cannot cover $C"
    pts=()
    for i in "\${!points[@]}"; do
      if [ "\${pcover[$i]}" = "$c" ]; then pts+=("\${points[$i]}"); fi
    done
    if [ \${#pts[@]} -gt 0 ]; then mkdir -p -- "\${pts[@]}" || fail "cannot make mount points in $C"; fi
  else
    mount -c --bind "/proc/self/fd/$fd" "$C" || fail "cannot cover $C"
    exec {fd}<&-
  fi
  for i in "\${!keeps[@]}"; do
    if [ "\${kcover[$i]}" != "$c" ]; then continue; fi
    k=\${keeps[$i]}; fd=\${fds[$i]}
    mount -c --rbind "/proc/self/fd/$fd" "$k" || fail "cannot keep $k reachable"
    # An open descriptor would lead past the cover (openat "..") to what it hides: none reaches the command.
    exec {fd}<&-
  done
done
for x in "\${secrets[@]}"; do
  if [ -d "$x" ]; then robind "$E" "$x" || fail "cannot hide $x"
  elif [ -e "$x" ]; then robind /dev/null "$x" || fail "cannot hide $x"
  fi
done
mapfile -t lines < /proc/self/mountinfo
for line in "\${lines[@]}"; do
  read -r id _ _ _ mp opts _ <<< "$line"
  printf -v mp '%b' "$mp"
  open=
  for w in "$S" "$R" "\${writable[@]}"; do
    if [ "$mp" = "$w" ]; then open=1; fi
  done
  [ -z "$open" ] || continue
  case ",$opts," in *,ro,*) continue ;; esac
  # An automount point holds nothing to write, and naming it would trigger it (systemd's binfmt_misc under /proc).
  fstype=\${line#* - }
  case "\${fstype%% *}" in autofs) continue ;; esac
  if [ -n "\${inherited[$id]}" ]; then
    # An inherited mount below one of ours is out of the command's reach: nothing to seal (nor can it be named).
    covered=
    for c in "$S" "$R" "\${covers[@]}" "\${secrets[@]}"; do
      case "$mp" in "$c"|"$c"/*) covered=1 ;; esac
    done
    # /dev and /proc are fresh (a private /dev, the pid namespace's own proc, itself sealed): what was mounted below them is gone.
    case "$mp" in /dev/*|/proc/*) covered=1 ;; esac
    [ -z "$covered" ] || continue
  fi
  if ! mount -o "remount,bind,ro\${opts#rw}" "$mp" 2>/dev/null; then
    # A mount point this setup cannot reach by path, the command (same user, fewer rights) cannot reach either.
    [ -e "$mp" ] || continue
    fail "cannot make $mp read-only"
  fi
done
for b in "\${binds[@]}" "\${keeps[@]}" "\${rocovers[@]}" / /proc/sys /sys /dev; do
  case "$b" in "$S"|"$R") continue ;; esac
  if [ -w "$b" ]; then fail "$b could not be made read-only"; fi
done
cd "$R" || fail "cannot enter the workspace path $R"
exec 2>&1
exec "$SP" ${DROP_PRIVILEGES.join(" ")} "$SH" -c "$CMD"
`;

interface RunOutcome extends CommandOutcome {
  /** The sandbox setup's complaint when the command never started; null otherwise. */
  setupFailure: string | null;
}

function runIn(s: Scratch, command: string, options: RunCommandOptions, hiding: Hiding | null, signal?: AbortSignal): Promise<RunOutcome> {
  const env = commandEnv(options.parentEnv ?? process.env, s, options.extraEnv);
  let file: string;
  let args: string[];
  if (s.share === "namespace") {
    // Triples (kind, path, path) read by NAMESPACE_SETUP; masks come after the binds they lie in.
    const items: string[] = [];
    for (const m of s.mounts) items.push("bind", m.source, m.target);
    for (const sd of s.shared) for (const m of sd.masks) items.push(m.dir ? "maskd" : "maskf", m.path, "-");
    (hiding?.covers ?? []).forEach((c, i) => {
      let source = "tmpfs";
      if (c.with === "dir") {
        // An empty directory with the mount points made here (one process less each in the namespace).
        source = join(s.root, `cover-${i}`);
        mkdirSync(source);
        chmodSync(source, c.writable ? 0o1777 : 0o755);
        for (const p of c.mountPoints) mkdirSync(join(source, relative(c.path, p)), { recursive: true, mode: 0o755 });
      } else {
        for (const p of c.mountPoints) items.push("mkpt", p, String(i));
      }
      items.push(c.writable ? "wcover" : "cover", c.path, source);
      for (const k of c.keeps) items.push("keep", k, String(i));
    });
    for (const x of hiding?.secrets ?? []) items.push("secret", x, "-");
    makeDevDir(join(s.root, "dev"));
    file = "unshare";
    const net = options.network ? [] : ["--net"];
    args = [...unshareArgs!, ...net, BASH!, "-c", NAMESPACE_SETUP, "pencil-sandbox", s.root, s.dir, s.ws.root, s.empty, SHELL, command, SETPRIV!, options.network ? "" : (IP ?? ""), ...items];
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

function report(command: string, s: Scratch, outcome: RunOutcome, ctx: ToolContext, pencilHome: string, network: boolean): string {
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
  if (s.share === "namespace" && !network && NETWORK_FAILURE.test(output)) {
    lines.push("Note: sandboxed commands have no network access (the user can allow it). Do not retry: ask the user to run the download or install, or to allow network access.");
  }
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
  let changes: ScratchChange[];
  try {
    changes = diffScratch(s, ctx.limits.maxFileBytes);
  } catch (error) {
    if (!(error instanceof ScratchError)) throw error;
    lines.push(`Not staged: anything, because ${error.message}`);
    return lines.join("\n");
  }
  lines.push(...stageChanges(s, changes, ctx, pencilHome));
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
    // A link on disk above the path would carry the staged write elsewhere when applied.
    const why = parentLinked(real) ? "its parent is a symbolic link on disk." : whyNotStaged(s, c, real, ctx, refusalOf);
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

/** True when a directory above `real` is (or leads through) a symbolic link on disk, or cannot be resolved. */
function parentLinked(real: string): boolean {
  try {
    return realPathLoose(dirname(real)).real !== dirname(real);
  } catch {
    return true;
  }
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
  if (c.unread) return `${c.unread}.`;
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
