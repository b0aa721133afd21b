import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import type { Scratch } from "../scratch/types.ts";
import { ToolError } from "../errors/tool-error.ts";
import { type EnvSettings, planCommandEnv } from "./command-env.ts";
import type { Hiding } from "./hiding.ts";
import { processTree, trackProcess } from "./live-processes.ts";
import { memoryFsGrowth } from "./memory-fs-growth.ts";
import { planMounts, prepareCoverDirs, type SetupPlan } from "./mount-plan.ts";
import { STANDALONE } from "../installation.ts";
import { SETUP_FAILED_EXIT, SETUP_MARKER, SETUP_MODE } from "./setup-contract.ts";

/** How a command is run and what it gets: the knobs of run_command that reach the process itself. */
export interface CommandRunOptions {
  /** Milliseconds before the command's whole process group is killed (default 120 000). */
  timeoutMs?: number;
  /** Bytes of combined stdout+stderr kept, from the end (default 30 KiB). */
  outputCapBytes?: number;
  /** The environment PATH, LANG and extras are taken from (default process.env). */
  parentEnv?: Record<string, string | undefined>;
  /** Extra variables for the command; any whose name looks secret or leads to a host socket (SSH_AUTH_SOCK, DISPLAY…) is dropped. */
  extraEnv?: Record<string, string>;
  /** sandbox.env of the settings: variables set or removed on top of the owner's environment. */
  envSettings?: EnvSettings;
  /** The user's real home directory, hidden from the command in the namespace sandbox (default os.homedir()); XDG directories set inside it move with the command's HOME. */
  realHome?: string;
  /**
   * Bytes the command may write to files (its scratch copy and temporary
   * space), all its processes together: no single file may grow past it
   * (RLIMIT_FSIZE), and the runner, watching the process tree's written bytes
   * ten times a second, kills the command once the total passes it (so it can
   * overshoot by what it writes in a tenth of a second). Default 1 GiB.
   */
  writeCapBytes?: number;
  /** The unix socket of Pencil's proxy for this command (run_command's, or with the network off its refusing one); without it no proxy variables are set. */
  proxySocket?: string;
  /** The proxy's CA (PEM) and the system's certificates followed by it: written into the scratch, and the command's TLS clients pointed at them. */
  proxyCa?: { cert: string; bundle: string };
  /**
   * Namespace sandbox: let the command use the host's network (default false:
   * a private network with only its own loopback, so no internet, no local
   * services, no cloud metadata endpoint). With it, host services listening on
   * 127.0.0.1 and abstract unix sockets are reachable too.
   */
  network?: boolean;
}

/** What one run produced, before it is turned into the model's text. */
interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** The last bytes of the combined output, decoded. */
  output: string;
  /** How many bytes `output` was decoded from. */
  keptBytes: number;
  /** The first bytes of the output, decoded, when `output` is only its end (null or absent when nothing was cut). */
  outputHead?: string | null;
  /** Total bytes the command wrote to stdout and stderr. */
  outputBytes: number;
  /** The time limit it ran under, in milliseconds. */
  limitMs: number;
  /** True when it was killed for writing more than the write cap. */
  overCap: boolean;
  /** Bytes its processes had written to files when it ended (or was killed), as /proc counts them; null where that cannot be read. */
  writtenBytes: number | null;
}

/** The port, on the command's own private loopback, where the forwarder to Pencil's proxy listens. */
const PROXY_PORT = 3128;

/** The forwarder run (by Bun, without capabilities) inside the namespace: each connection to 127.0.0.1:PORT (the socket on its descriptor 3) piped to the proxy's unix socket. */
const FORWARDER = `import net from "node:net";
const [sock] = process.argv.slice(2);
net.createServer((c) => {
  const u = net.connect(sock);
  c.pipe(u);
  u.pipe(c);
  c.on("error", () => u.destroy());
  u.on("error", () => c.destroy());
}).listen({ fd: 3 });
`;

/**
 * The proxy variables every common client honours (curl and git read the lower-case ones for http), and, with the
 * proxy's CA written to `ca` (that CA alone) and `bundle` (the system's certificates and the CA), the variables
 * through which common TLS clients trust it: the proxy opens HTTPS tunnels with certificates that CA signed.
 */
function proxyEnv(trust: { ca: string; bundle: string } | null): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  const noProxy = "localhost,127.0.0.1,::1";
  const tls: Record<string, string> = trust
    ? {
        SSL_CERT_FILE: trust.bundle,
        CURL_CA_BUNDLE: trust.bundle,
        GIT_SSL_CAINFO: trust.bundle,
        // Node and Bun add these to their own roots.
        NODE_EXTRA_CA_CERTS: trust.ca,
        REQUESTS_CA_BUNDLE: trust.bundle,
        PIP_CERT: trust.bundle,
        npm_config_cafile: trust.bundle,
        YARN_HTTPS_CA_FILE_PATH: trust.bundle,
        CARGO_HTTP_CAINFO: trust.bundle,
        AWS_CA_BUNDLE: trust.bundle,
        DENO_CERT: trust.bundle,
      }
    : {};
  return {
    ...tls,
    http_proxy: url,
    https_proxy: url,
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    all_proxy: url,
    no_proxy: noProxy,
    NO_PROXY: noProxy,
    npm_config_proxy: url,
    npm_config_https_proxy: url,
  };
}

/** Bytes a command may write when no cap is given: 1 GiB. */
const DEFAULT_WRITE_CAP = 1024 * 1024 * 1024;
/** Milliseconds between two looks at a running command's written bytes. */
const WRITE_WATCH_MS = 100;
/**
 * What the total watcher lets pass over the cap: the kernel's write_bytes counts whole pages and the
 * writer's own small writes, so one file held to the cap by the per-file limit reads a little over it.
 * The per-file limit answers that writer ("File too large"); the watcher is for many files in all.
 */
function writeWatchLimit(writeCap: number): number {
  return writeCap + Math.max(64 * 1024, Math.ceil(writeCap / 16));
}

/** A write cap in the 1024-byte blocks of `ulimit -f` and tmpfs sizes (at least one). */
function capBlocks(writeCap: number): number {
  return Math.max(1, Math.ceil(writeCap / 1024));
}

/** Milliseconds before a command is killed when no timeout is given. */
const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_OUTPUT_CAP = 30 * 1024;

/**
 * Whether commands can run in the namespace sandbox here: unprivileged user,
 * mount and network namespaces, bind mounts, and `setpriv` to drop every
 * capability before the command starts (probed once per process, then cached).
 */
export function sandboxAvailable(): boolean {
  if (unshareArgs === undefined) unshareArgs = probeUnshare();
  return unshareArgs !== null;
}

/**
 * sandboxAvailable without blocking: the probe's processes run while the caller does other work (started when a
 * command tool is made, so the first command seldom waits for it). Shares its answer with sandboxAvailable.
 */
export function sandboxProbe(): Promise<boolean> {
  if (unshareArgs !== undefined) return Promise.resolve(unshareArgs !== null);
  // setpriv's parent-death signal is checked meanwhile, so the first command's launch (diesWithPencil) spawns nothing more.
  probing ??= Promise.all([probeUnshareAsync(), pdeathsigWorks()]).then(([args, dies]) => {
    pdeathsig ??= dies;
    unshareArgs ??= args;
    return unshareArgs !== null;
  });
  return probing;
}

/** The probe's answer when it has one (true: the sandbox works here), else undefined: not probed, or still probing. */
export function sandboxKnown(): boolean | undefined {
  return unshareArgs === undefined ? undefined : unshareArgs !== null;
}

let unshareArgs: string[] | null | undefined;
let probing: Promise<boolean> | undefined;

/** The host devices the namespace sandbox's private /dev shows: none reaches a terminal, disk or console the owner uses. */
const DEV_NODES: readonly string[] = ["null", "zero", "full", "random", "urandom", "tty"];

/** Lays out the private /dev in `dir`: empty files where the runner binds DEV_NODES, /dev/fd and the std links, empty shm and pts. */
function makeDevDir(dir: string): void {
  mkdirSync(dir, { mode: 0o755 });
  for (const d of ["shm", "pts"]) mkdirSync(join(dir, d), { mode: 0o755 });
  for (const name of DEV_NODES) if (existsSync(`/dev/${name}`)) writeFileSync(join(dir, name), "", { mode: 0o666 });
  symlinkSync("/proc/self/fd", join(dir, "fd"));
  for (const [fd, name] of ["stdin", "stdout", "stderr"].entries()) symlinkSync(`/proc/self/fd/${fd}`, join(dir, name));
}

/** Where the sandbox's own programs (unshare) are looked up, whatever PATH the command gets. */
const SETUP_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * What follows Bun's path to make it the first process of the namespaces: the setup program
 * (core/sandbox/namespace-setup.ts) from source; in the single executable, which is its own Bun and carries no
 * source files, the mode in which its entry point runs that program.
 */
const SETUP_PROGRAM = STANDALONE ? SETUP_MODE : join(import.meta.dir, "namespace-setup.ts");

/**
 * The probe is a real run: a scratch of its own, the whole setup (binds, /dev, the seal of every mount), then a shell
 * without capabilities that must fail to unmount what the setup mounted. Null where it cannot run at all.
 */
function prepareProbe(): ProbeRun | null {
  if (process.platform !== "linux" || !BASH || !SETPRIV) return null;
  const root = realpathSync(mkdtempSync(join(tmpdir(), "pencil-probe-")));
  const done = () => rmSync(root, { recursive: true, force: true });
  try {
    const dir = join(root, "ws");
    const empty = join(root, "empty");
    mkdirSync(dir);
    mkdirSync(empty);
    makeDevDir(join(root, "dev"));
    const plan = writePlan(root, {
      scratch: root,
      dir,
      at: dir,
      empty,
      steps: [],
      fileBlocks: 1024,
      setpriv: SETPRIV,
      argv: [BASH, "-c", '[ "$$" = 1 ] && ! umount "$1" 2>/dev/null', "probe", dir],
      env: [`PATH=${SETUP_PATH}`],
      stderr: "stdout",
    });
    // --ipc: the user's System V shared memory, semaphores and message queues stay out of reach.
    // --pid --fork --kill-child --mount-proc: the setup is init of a private pid namespace (the command then is), so
    // when it exits (or is killed) the kernel kills every process left in it, setsid'd ones included, before unshare
    // returns; no survivor can touch the copy while it is diffed.
    const args = (map: string) => [
      "--user",
      map,
      "--mount",
      "--propagation",
      "private",
      "--ipc",
      "--pid",
      "--fork",
      "--kill-child",
      "--mount-proc",
    ];
    return {
      args,
      argv: (map) => [...args(map), "--net", process.execPath, SETUP_PROGRAM, plan],
      spawn: { cwd: root, env: { PATH: SETUP_PATH }, stdio: "ignore", timeout: 10_000 },
      done,
    };
  } catch (error) {
    done();
    throw error;
  }
}

/** A prepared probe: unshare's arguments per user mapping, how to spawn it, and the removal of its scratch. */
interface ProbeRun {
  /** The namespace arguments a command gets when the probe passes with `map`. */
  args(map: string): string[];
  /** unshare's whole argv for the probe with `map`. */
  argv(map: string): string[];
  spawn: { cwd: string; env: Record<string, string>; stdio: "ignore"; timeout: number };
  done(): void;
}

/** The user mappings tried in turn: the user's own uid inside where unshare can (util-linux ≥ 2.38), else root. */
const PROBE_MAPS = ["--map-current-user", "--map-root-user"] as const;

function probeUnshare(): string[] | null {
  const probe = prepareProbe();
  if (probe === null) return null;
  try {
    for (const map of PROBE_MAPS)
      if (spawnSync("unshare", probe.argv(map), probe.spawn).status === 0) return probe.args(map);
    return null;
  } finally {
    probe.done();
  }
}

async function probeUnshareAsync(): Promise<string[] | null> {
  const probe = prepareProbe();
  if (probe === null) return null;
  try {
    for (const map of PROBE_MAPS) {
      const status = await new Promise<number | null>((resolve) => {
        const { timeout, ...spawnOptions } = probe.spawn;
        const child = spawn("unshare", probe.argv(map), spawnOptions);
        const timer = setTimeout(() => child.kill("SIGKILL"), timeout);
        child.on("error", () => resolve(null));
        child.on("exit", (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
      if (status === 0) return probe.args(map);
    }
    return null;
  } finally {
    probe.done();
  }
}

/**
 * `program`'s argv prefixed so that it is killed when the process that started it dies, however it dies: setpriv's
 * parent-death signal, kept across its exec of `program` (util-linux ≥ 2.33; where setpriv lacks it, `program` alone).
 * unshare --kill-child then takes the namespace down: nothing a command started outlives a Pencil killed by SIGKILL.
 */
function diesWithPencil(program: string): string[] {
  pdeathsig ??=
    SETPRIV !== null && spawnSync(SETPRIV, ["--pdeathsig", "KILL", "true"], { stdio: "ignore" }).status === 0;
  return pdeathsig ? [SETPRIV!, "--pdeathsig", "KILL", program] : [program];
}

let pdeathsig: boolean | undefined;

/** Whether setpriv here takes --pdeathsig (util-linux ≥ 2.33), found without blocking. */
function pdeathsigWorks(): Promise<boolean> {
  if (SETPRIV === null) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(SETPRIV, ["--pdeathsig", "KILL", "true"], { stdio: "ignore" });
    child.on("error", () => resolve(false));
    child.on("exit", (code) => resolve(code === 0));
  });
}

/** Writes the setup's plan into the scratch; returns its path. */
function writePlan(root: string, plan: SetupPlan): string {
  const path = join(root, "sandbox-plan.json");
  writeFileSync(path, JSON.stringify(plan), { mode: 0o600 });
  return path;
}

/** The first of `names` that exists as an absolute path. */
function firstExisting(names: string[]): string | null {
  return names.find((p) => existsSync(p)) ?? null;
}

const BASH = firstExisting(["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"]);
const SHELL = BASH ?? "/bin/sh";
const SETPRIV = firstExisting([
  "/usr/bin/setpriv",
  "/bin/setpriv",
  "/usr/sbin/setpriv",
  "/sbin/setpriv",
  "/usr/local/bin/setpriv",
]);

/** A long-running program started in the namespace sandbox: what to spawn, its standard input and output left to the caller. */
export interface SandboxedLaunch {
  command: string;
  args: string[];
  /**
   * The environment to spawn it with: PATH alone. The program's own travels in the plan, so nothing in it (BASH_ENV,
   * BUN_OPTIONS, LD_PRELOAD, a PATH leading to another `unshare`) reaches the launcher shell, unshare or the setup,
   * which run before anything is confined.
   */
  env: Record<string, string>;
}

/**
 * Runs "$@" (unshare) with stdin passed on, and kills it on SIGTERM, SIGINT or SIGHUP: unshare --fork blocks those
 * while it waits, and the namespace's init ignores them, so a client's kill would otherwise leave the server running.
 * Its --kill-child then takes everything in the namespace down with it.
 */
const STOP_ON_TERM = `trap 'kill -KILL "$p" 2>/dev/null' TERM INT HUP; "$@" <&0 & p=$!; while :; do wait "$p" 2>/dev/null; s=$?; kill -0 "$p" 2>/dev/null || exit "$s"; done`;

/**
 * The argv that starts `command args` under the same namespace setup as runIn
 * (read-only system, the host hidden as `hiding` plans, secrets masked, every
 * capability dropped), for a program that keeps running and talks over its
 * stdin and stdout (a stdio MCP server). `root` is a private directory (the
 * scratch: it and `dir` inside it are the only writable places besides the
 * private temporary space); the program starts in `dir`. Its stderr stays its
 * own (the launch's stderr), apart from the stdout protocol; a setup failure
 * exits 97 before the program starts, its complaint on that same stderr. A
 * private network always: with `proxy`, its only way out is Pencil's proxy on
 * that unix socket (in `root`), as for run_command; without, none at all.
 * The program gets `env` exactly (plus the proxy's variables); spawn the launch
 * with its own `env`. Null where the namespace sandbox is not available here.
 */
export function sandboxedLaunch(input: {
  root: string;
  dir: string;
  command: string;
  args: readonly string[];
  /** The program's environment. */
  env: Record<string, string>;
  hiding: Hiding;
  /** The proxy's unix socket, and the CA files (written by the caller into `root`) the program's TLS clients trust. */
  proxy?: { socket: string; trust: { ca: string; bundle: string } | null };
  writeCapBytes?: number;
}): SandboxedLaunch | null {
  if (!sandboxAvailable()) return null;
  const empty = join(input.root, "empty");
  mkdirSync(empty, { recursive: true, mode: 0o755 });
  mkdirSync(input.dir, { recursive: true, mode: 0o700 });
  const plan = planMounts({ root: input.root, mounts: [], shared: [] }, input.hiding);
  prepareCoverDirs(plan);
  makeDevDir(join(input.root, "dev"));
  const env = { ...input.env };
  if (input.proxy) {
    writeFileSync(join(input.root, "forward.mjs"), FORWARDER);
    Object.assign(env, proxyEnv(input.proxy.trust));
  }
  const planPath = writePlan(input.root, {
    scratch: input.root,
    dir: input.dir,
    at: input.dir,
    empty,
    steps: plan.steps,
    fileBlocks: capBlocks(input.writeCapBytes ?? DEFAULT_WRITE_CAP),
    setpriv: SETPRIV!,
    argv: [input.command, ...input.args],
    env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    // Stdout is the protocol: the program's stderr stays apart from it, on the launch's own stderr.
    stderr: "own",
    // Spawned in Pencil's own process group: what it signals as a group must not reach past the namespace.
    newSession: true,
    ...(input.proxy
      ? {
          forwarder: {
            bun: process.execPath,
            script: join(input.root, "forward.mjs"),
            socket: input.proxy.socket,
            port: PROXY_PORT,
          },
        }
      : {}),
  });
  return {
    env: { PATH: SETUP_PATH },
    // Both the launcher shell and unshare die with their parent: a Pencil killed outright (SIGKILL, the OOM killer)
    // takes the server's namespace with it, as its graceful stop does.
    command: diesWithPencil(BASH!)[0]!,
    // No startup files: bash reads ~/.bashrc when its stdin is a socket (as a spawned pipe is), as for ssh.
    args: [
      ...diesWithPencil(BASH!).slice(1),
      "--norc",
      "--noprofile",
      "-c",
      STOP_ON_TERM,
      "pencil-server",
      ...setupCommand(planPath),
    ],
  };
}

/** The namespace's launch: unshare (dying with Pencil) starting the setup program on the plan at `planPath`. */
function setupCommand(planPath: string): [string, ...string[]] {
  const [unshare, ...rest] = diesWithPencil("unshare");
  return [unshare!, ...rest, ...unshareArgs!, "--net", process.execPath, SETUP_PROGRAM, planPath];
}

/** What one run produced, plus why the sandbox could not be set up if it could not. */
export interface RunOutcome extends CommandOutcome {
  /** The sandbox setup's complaint when the command never started; null otherwise. */
  setupFailure: string | null;
}

/** Runs `command` in the scratch copy `s` (in the namespace sandbox when `s.share` is `namespace`), killing its whole process group on timeout, abort or exit. */
export function runIn(
  s: Scratch,
  command: string,
  options: CommandRunOptions,
  hiding: Hiding | null,
  signal?: AbortSignal,
): Promise<RunOutcome> {
  const env = planCommandEnv(options.parentEnv ?? process.env, s, {
    ...(options.extraEnv ? { extra: options.extraEnv } : {}),
    ...(options.envSettings ? { settings: options.envSettings } : {}),
    realHome: options.realHome ?? homedir(),
    // The version managers whose roots the sandbox shows, named for shims that would look for them under HOME.
    layers: [{ by: "Pencil (version managers shown)", vars: (s.share === "namespace" && hiding?.managerEnv) || {} }],
  }).env;
  const writeCap = options.writeCapBytes ?? DEFAULT_WRITE_CAP;
  const fileBlocks = capBlocks(writeCap);
  let file: string;
  let args: string[];
  let spawnEnv: Record<string, string> = env;
  if (s.share === "namespace") {
    // The plan as data (core/sandbox/mount-plan.ts), taken by the setup program by system calls.
    const plan = planMounts(s, hiding);
    prepareCoverDirs(plan);
    makeDevDir(join(s.root, "dev"));
    // A private network always: with the network on, the command reaches it only through the proxy; with it off, the
    // proxy variables lead to one that refuses at once (run_command starts it), so clients fail fast and say why.
    const forwarded = options.proxySocket !== undefined;
    if (forwarded) {
      writeFileSync(join(s.root, "forward.mjs"), FORWARDER);
      const trust = options.proxyCa
        ? { ca: join(s.root, "pencil-proxy-ca.pem"), bundle: join(s.root, "pencil-ca-bundle.pem") }
        : null;
      if (trust && options.proxyCa) {
        writeFileSync(trust.ca, options.proxyCa.cert);
        writeFileSync(trust.bundle, options.proxyCa.bundle);
      }
      Object.assign(env, proxyEnv(trust));
    }
    const planPath = writePlan(s.root, {
      scratch: s.root,
      dir: s.dir,
      at: s.ws.root,
      empty: s.empty,
      steps: plan.steps,
      fileBlocks,
      setpriv: SETPRIV!,
      argv: [SHELL, "-c", command],
      env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      stderr: "stdout",
      ...(forwarded
        ? {
            forwarder: {
              bun: process.execPath,
              script: join(s.root, "forward.mjs"),
              socket: join(s.root, "proxy.sock"),
              port: PROXY_PORT,
            },
          }
        : {}),
    });
    [file, ...args] = setupCommand(planPath);
    // The command's environment travels in the plan: nothing in it (BUN_OPTIONS, say) can change how the setup runs.
    spawnEnv = { PATH: SETUP_PATH };
  } else {
    file = SHELL;
    args = [
      "-c",
      'cd "$1" && exec 2>&1 && ulimit -f "$4" && exec "$2" -c "$3"',
      "pencil-run",
      s.dir,
      SHELL,
      command,
      String(fileBlocks),
    ];
  }
  const cap = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const out = new Tail(cap);
    const setupErr = new Tail(4096);
    let timedOut = false;
    let aborted = false;
    const child = spawn(file, args, { cwd: s.root, env: spawnEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
    // A Pencil stopped by a signal ends it (app/stop-on-signal.ts): its namespace must not outlive Pencil under init.
    const untrack = child.pid !== undefined ? trackProcess(child.pid) : () => {};
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
    let overCap = false;
    let written: number | null = null;
    const watchLimit = writeWatchLimit(writeCap);
    // Writes into a scratch in memory reach no block device, so write_bytes misses them: count its growth too.
    const memoryGrowth = memoryFsGrowth(s.root);
    const watch = setInterval(() => {
      if (!child.pid) return;
      const onDisk = treeWrittenBytes(child.pid);
      written = memoryGrowth === null ? onDisk : (onDisk ?? 0) + memoryGrowth();
      if (written !== null && written > watchLimit) {
        overCap = true;
        killGroup();
      }
    }, WRITE_WATCH_MS);
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
      untrack();
      clearTimeout(timer);
      clearInterval(watch);
      signal?.removeEventListener("abort", onAbort);
      reject(new ToolError(`The command could not be started (${error.message}).`));
    });
    child.on("exit", (code, sig) => {
      clearTimeout(timer);
      clearInterval(watch);
      signal?.removeEventListener("abort", onAbort);
      // Background jobs the command left behind must not outlive it (nor write into the copy while it is diffed).
      killGroup();
      untrack();
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
          limitMs: timeoutMs,
          output: out.text(),
          outputHead: out.head(),
          keptBytes: Math.min(out.total, cap),
          outputBytes: out.total,
          overCap,
          writtenBytes: written,
          setupFailure:
            s.share === "namespace" && code === SETUP_FAILED_EXIT && marker !== -1
              ? setupText
                  .slice(marker + SETUP_MARKER.length)
                  .trim()
                  .split("\n")[0]!
              : null,
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

/**
 * Bytes written to files by the process tree under `root` (live processes and
 * the children they reaped, from /proc/<pid>/io's write_bytes); null when
 * /proc cannot tell (not Linux, or the counters are not readable).
 */
function treeWrittenBytes(root: number): number | null {
  let sum = 0;
  let readable = false;
  for (const pid of processTree(root)) {
    try {
      const m = /^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"));
      if (m) {
        sum += Number(m[1]);
        readable = true;
      }
    } catch {
      // gone meanwhile
    }
  }
  return readable ? sum : null;
}

/** Bytes kept of an output's start, where a long run's first failure usually is. */
const HEAD_BYTES = 16 * 1024;

/** Keeps the last `cap` bytes of a stream, and its first HEAD_BYTES, and counts the rest. */
class Tail {
  private chunks: Buffer[] = [];
  private kept = 0;
  private first: Buffer[] = [];
  private firstKept = 0;
  total = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    if (this.firstKept < HEAD_BYTES) {
      const part = chunk.subarray(0, HEAD_BYTES - this.firstKept);
      this.first.push(part);
      this.firstKept += part.length;
    }
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

  /** The output's first bytes, decoded, when the kept tail does not reach back to them; else null. */
  head(): string | null {
    if (this.total <= this.cap) return null;
    return Buffer.concat(this.first).toString("utf8");
  }
}
