import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Scratch } from "../scratch/types.ts";
import { ToolError } from "../tools/tool.ts";
import { commandEnv } from "./command-env.ts";
import type { Hiding } from "./hiding.ts";
import { planMounts, prepareCoverDirs, stepArguments } from "./mount-plan.ts";

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
  /**
   * Bytes the command may write to files (its scratch copy and temporary
   * space), all its processes together: no single file may grow past it
   * (RLIMIT_FSIZE), and the runner, watching the process tree's written bytes
   * ten times a second, kills the command once the total passes it (so it can
   * overshoot by what it writes in a tenth of a second). Default 1 GiB.
   */
  writeCapBytes?: number;
  /** The unix socket of Pencil's proxy for this run (set by run_command when the network is on); without it there is no network. */
  proxySocket?: string;
  /**
   * Namespace sandbox: let the command use the host's network (default false:
   * a private network with only its own loopback, so no internet, no local
   * services, no cloud metadata endpoint). With it, host services listening on
   * 127.0.0.1 and abstract unix sockets are reachable too.
   */
  network?: boolean;
}

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
  /** True when it was killed for writing more than the write cap. */
  overCap: boolean;
  /** Bytes its processes had written to files when it ended (or was killed), as /proc counts them; null where that cannot be read. */
  writtenBytes: number | null;
}

/** The port, on the command's own private loopback, where the forwarder to Pencil's proxy listens. */
export const PROXY_PORT = 3128;

/** The forwarder run (by Bun, without capabilities) inside the namespace: each connection to 127.0.0.1:PORT piped to the proxy's unix socket. */
const FORWARDER = `import net from "node:net";
import { writeFileSync } from "node:fs";
const [sock, port, ready] = process.argv.slice(2);
net.createServer((c) => {
  const u = net.connect(sock);
  c.pipe(u);
  u.pipe(c);
  c.on("error", () => u.destroy());
  u.on("error", () => c.destroy());
}).listen(Number(port), "127.0.0.1", () => writeFileSync(ready, "1"));
`;

/** The proxy variables every common client honours (curl and git read the lower-case ones for http). */
function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  const noProxy = "localhost,127.0.0.1,::1";
  return {
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
export const DEFAULT_WRITE_CAP = 1024 * 1024 * 1024;
/** Milliseconds between two looks at a running command's written bytes. */
const WRITE_WATCH_MS = 100;

/** Milliseconds before a command is killed when no timeout is given. */
export const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_OUTPUT_CAP = 30 * 1024;
const SETUP_FAILED_EXIT = 97;
const SETUP_MARKER = "pencil-sandbox:";

/**
 * Whether commands can run in the namespace sandbox here: unprivileged user,
 * mount and network namespaces, bind mounts, and `setpriv` to drop every
 * capability before the command starts (probed once per process, then cached).
 */
export function sandboxAvailable(): boolean {
  if (unshareArgs === undefined) unshareArgs = probeUnshare();
  return unshareArgs !== null;
}

let unshareArgs: string[] | null | undefined;

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
    const args = [
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
    const r = spawnSync("unshare", [...args, "--net", BASH, "-c", PROBE, "probe", tmpdir(), SETPRIV, BASH], {
      stdio: "ignore",
      timeout: 5000,
    });
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
const SETPRIV = firstExisting([
  "/usr/bin/setpriv",
  "/bin/setpriv",
  "/usr/sbin/setpriv",
  "/sbin/setpriv",
  "/usr/local/bin/setpriv",
]);
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
S=$1; W=$2; R=$3; E=$4; SH=$5; CMD=$6; SP=$7; IP=$8; FB=$9; FW=\${10}; shift 10
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
binds=(); secrets=(); covers=(); sources=(); writable=(); rocovers=(); keeps=(); kcover=(); points=(); pcover=(); dels=(); OW=
while [ $# -ge 3 ]; do
  case "$1" in
    ovwork) OW=$2 ;;
    # Copy-on-write: the workspace read-only under a private upper layer, at the scratch's mount point (placed at the
    # workspace path below like a copy). userxattr: overlayfs keeps whiteouts and opaque marks in user.* attributes.
    # No redirects followed, no metacopy: nothing written into a layer can make the overlay show what the policy hid.
    # The layers themselves are then covered: the command reaches its upper layer only through the overlay.
    overlay) mount -t overlay pencil-scratch -o "userxattr,redirect_dir=nofollow,metacopy=off,lowerdir=$2,upperdir=$3,workdir=$OW" "$W" || fail "cannot mount the copy-on-write overlay"
      robind "$E" "$3" && robind "$E" "$OW" || fail "cannot cover the overlay's layers" ;;
    unlink) dels+=("$2") ;;
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
# The staged deletions and what the policy hides, removed through the overlay (whiteouts in the upper layer), before
# the command: absent, as from a copy.
if [ \${#dels[@]} -gt 0 ]; then rm -rf -- "\${dels[@]}" || fail "cannot lay the staged deletions and hide what the policy hides"; fi
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
    # Memory-backed: sized to the write cap, so it cannot be filled past it either.
    mount -t tmpfs -o "mode=1777,nosuid,nodev,size=$((FB * 1024))" pencil-tmp "$C" || fail "cannot cover $C"
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
# The secrets masked in one mount(8) run from a table (one process instead of one each: there can be a hundred);
# should any line fail, each is masked again on its own, and a failure there stops the setup.
# fstab escapes (no subshell: REPLY holds the result).
fesc() { local v=\${1//\\/\\134}; v=\${v// /\\040}; v=\${v//$'\t'/\\011}; REPLY=\${v//$'\n'/\\012}; }
table=
fesc "$E"; EE=$REPLY
for x in "\${secrets[@]}"; do
  fesc "$x"
  if [ -d "$x" ]; then table+="$EE $REPLY none bind,ro 0 0"$'\n'
  elif [ -e "$x" ]; then table+="/dev/null $REPLY none bind,ro 0 0"$'\n'
  fi
done
if [ -n "$table" ]; then
  printf '%s' "$table" > "$S/masks.fstab"
  if ! mount -a -T "$S/masks.fstab" 2>/dev/null; then
    for x in "\${secrets[@]}"; do
      if [ -d "$x" ]; then robind "$E" "$x" || fail "cannot hide $x"
      elif [ -e "$x" ]; then robind /dev/null "$x" || fail "cannot hide $x"
      fi
    done
  fi
fi
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
# No file larger than the write cap (1024-byte blocks); the runner watches the total.
ulimit -f "$FB" || fail "cannot cap file sizes"
# With the network on, the only way out is Pencil's proxy: a forwarder (no capabilities either) from this private
# network's 127.0.0.1:${PROXY_PORT} to the proxy's unix socket in the scratch.
if [ -n "$FW" ]; then
  "$SP" ${DROP_PRIVILEGES.join(" ")} "$FW" "$S/forward.mjs" "$S/proxy.sock" ${PROXY_PORT} "$S/forward-ready" </dev/null >/dev/null 2>&1 &
  for _ in $(seq 1 500); do [ -e "$S/forward-ready" ] && break; sleep 0.01; done
  [ -e "$S/forward-ready" ] || fail "the network proxy's forwarder did not start"
fi
exec "$SP" ${DROP_PRIVILEGES.join(" ")} "$SH" -c "$CMD"
`;

/** A long-running program started in the namespace sandbox: what to spawn, its standard input and output left to the caller. */
export interface SandboxedLaunch {
  command: string;
  args: string[];
}

/**
 * Runs "$@" (unshare) with stdin passed on, and kills it on SIGTERM, SIGINT or SIGHUP: unshare --fork blocks those
 * while it waits, and the namespace's init ignores them, so a client's kill would otherwise leave the server running.
 * Its --kill-child then takes everything in the namespace down with it.
 */
const STOP_ON_TERM = `trap 'kill -KILL "$p" 2>/dev/null' TERM INT HUP; "$@" <&0 & p=$!; while :; do wait "$p"; s=$?; kill -0 "$p" 2>/dev/null || exit "$s"; done`;

/** Quotes one word for the shell. */
function shellWord(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The argv that starts `command args` under the same namespace setup as runIn
 * (read-only system, the host hidden as `hiding` plans, secrets masked, every
 * capability dropped), for a program that keeps running and talks over its
 * stdin and stdout (a stdio MCP server). `root` is a private directory (the
 * scratch: it and `dir` inside it are the only writable places besides the
 * private temporary space); the program starts in `dir`. Its stderr goes to
 * /dev/null, so the setup's merged output cannot corrupt the stdout protocol
 * (a setup failure exits 97 before the program starts, its complaint on the
 * original stderr). No network unless `network` (then the host's network).
 * Null where the namespace sandbox is not available here.
 */
export function sandboxedLaunch(input: {
  root: string;
  dir: string;
  command: string;
  args: readonly string[];
  hiding: Hiding;
  network: boolean;
  writeCapBytes?: number;
}): SandboxedLaunch | null {
  if (!sandboxAvailable()) return null;
  const empty = join(input.root, "empty");
  mkdirSync(empty, { recursive: true, mode: 0o755 });
  mkdirSync(input.dir, { recursive: true, mode: 0o700 });
  const plan = planMounts({ root: input.root, mounts: [], shared: [] }, input.hiding);
  prepareCoverDirs(plan);
  makeDevDir(join(input.root, "dev"));
  const fileBlocks = Math.max(1, Math.ceil((input.writeCapBytes ?? DEFAULT_WRITE_CAP) / 1024));
  // The setup sends stderr to stdout just before the command (right for run_command's combined output); here stdout is
  // the protocol, so the program's stderr is discarded instead.
  const line = `exec 2>/dev/null; exec ${[input.command, ...input.args].map(shellWord).join(" ")}`;
  return {
    command: BASH!,
    args: [
      "-c",
      STOP_ON_TERM,
      "pencil-server",
      "unshare",
      ...unshareArgs!,
      ...(input.network ? [] : ["--net"]),
      BASH!,
      "-c",
      NAMESPACE_SETUP,
      "pencil-sandbox",
      input.root,
      input.dir,
      input.dir,
      empty,
      SHELL,
      line,
      SETPRIV!,
      IP ?? "",
      String(fileBlocks),
      "",
      ...stepArguments(plan.steps),
    ],
  };
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
  const env = commandEnv(options.parentEnv ?? process.env, s, options.extraEnv);
  const writeCap = options.writeCapBytes ?? DEFAULT_WRITE_CAP;
  const fileBlocks = Math.max(1, Math.ceil(writeCap / 1024));
  let file: string;
  let args: string[];
  if (s.share === "namespace") {
    // The plan as data (core/sandbox/mount-plan.ts), handed to NAMESPACE_SETUP as triples.
    const plan = planMounts(s, hiding);
    prepareCoverDirs(plan);
    const items = stepArguments(plan.steps);
    makeDevDir(join(s.root, "dev"));
    file = "unshare";
    // A private network always: with the network on, the command reaches it only through the proxy.
    const forwarder = options.network && options.proxySocket ? process.execPath : "";
    if (forwarder) {
      writeFileSync(join(s.root, "forward.mjs"), FORWARDER);
      Object.assign(env, proxyEnv());
    }
    args = [
      ...unshareArgs!,
      "--net",
      BASH!,
      "-c",
      NAMESPACE_SETUP,
      "pencil-sandbox",
      s.root,
      s.dir,
      s.ws.root,
      s.empty,
      SHELL,
      command,
      SETPRIV!,
      IP ?? "",
      String(fileBlocks),
      forwarder,
      ...items,
    ];
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
    let overCap = false;
    let written: number | null = null;
    const watch = setInterval(() => {
      if (!child.pid) return;
      written = treeWrittenBytes(child.pid);
      if (written !== null && written > writeCap) {
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
export function treeWrittenBytes(root: number): number | null {
  let sum = 0;
  let readable = false;
  const stack = [root];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    try {
      const m = /^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"));
      if (m) {
        sum += Number(m[1]);
        readable = true;
      }
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const kids = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
        if (kids) for (const k of kids.split(" ")) stack.push(Number(k));
      }
    } catch {
      // gone meanwhile
    }
  }
  return readable ? sum : null;
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
