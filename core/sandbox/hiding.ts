import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { PathPolicy } from "../policy/path-decisions.ts";
import { compilePolicy, decide, HOME_CREDENTIALS, type Policy } from "../policy/policy.ts";
import { INSTALL_DIR } from "../installation.ts";
import { isInside, realPathOrWritten } from "../workspace.ts";
import { SCAN_LIMIT, scanBelow, scanCache, type ScanCache } from "./scan-cache.ts";
import { GLOBAL_NPMRC, isFilteredSettingsPath } from "../policy/settings-names.ts";
import {
  companions,
  hasCorepack,
  type ManagerRoot,
  managerEnv,
  managerRootOf,
  managerRoots,
  xdgPlace,
} from "./version-managers.ts";

/**
 * Directories right below home that hold one whole toolchain and no
 * credentials: kept whole when PATH leads into them (a pyenv shim needs the
 * versions, npm under nvm its lib/).
 */
const TOOLCHAIN_ROOTS: ReadonlySet<string> = new Set([
  ".nvm",
  ".pyenv",
  ".rbenv",
  ".nodenv",
  ".goenv",
  ".bun",
  ".volta",
  ".deno",
  ".asdf",
  ".sdkman",
]);

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

/** A directory the namespace sandbox hides behind an empty one before the command runs. */
interface Cover {
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
  /**
   * Version files (VERSION_FILES) of the workspace's ancestors that lie in the cover and not in what it keeps
   * (~/code/.python-version for a workspace in ~/code/proj), real paths: copied into the cover, read-only, so a version
   * manager looking up from the workspace picks the version it picks outside.
   */
  files?: string[];
}

/**
 * The files version managers look for in the working directory and each of its parents, naming a version and
 * nothing else: pyenv, nodenv, nvm, fnm, volta-less node managers, rbenv, goenv, jenv, tfenv, asdf and mise (its
 * `.tool-versions`), sdkman, bun, rustup.
 */
const VERSION_FILES: readonly string[] = [
  ".python-version",
  ".node-version",
  ".nvmrc",
  ".ruby-version",
  ".go-version",
  ".java-version",
  ".terraform-version",
  ".bun-version",
  ".tool-versions",
  ".sdkmanrc",
  "rust-toolchain",
  "rust-toolchain.toml",
];

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
  /**
   * Directories not searched whole for denied entries because they hold more than
   * SCAN_LIMIT entries, so not shown: a toolchain directory among them is left covered
   * (not kept), a system directory (/etc) masked whole. Empty in any usual setup.
   */
  unscanned: string[];
  /**
   * The version managers' roots shown whole (read-only, secrets masked) because PATH leads into them, and the
   * variables (PYENV_ROOT, VOLTA_HOME, RUSTUP_HOME…) that let their shims find them under the command's own HOME.
   */
  managers?: { name: string; root: string }[];
  managerEnv?: Record<string, string>;
  /**
   * Package managers' settings files among `secrets` outside home (a pip.conf in /etc or in a toolchain root, npm's
   * global npmrc): masked like the rest, and shown again by run_command as their credential-free copies
   * (showFilteredSettings). A launch that shows no copies (an MCP server) leaves them masked.
   */
  settings?: string[];
}

/**
 * The system directories searched for secrets: configuration, and what is installed by hand. The rest of /usr, /bin,
 * /lib*, /nix and /snap hold what packages installed (read-only to the user) and are not searched: a search of /usr
 * alone is some 140,000 entries.
 */
const SEARCHED_SYSTEM_DIRS: readonly string[] = ["/etc", "/usr/local"];

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
  /** Pencil's install directory, whose .env files are masked (default INSTALL_DIR; null: none, as in the single executable). */
  installDir?: string | null;
  /** The environment Pencil runs in: its SSH_AUTH_SOCK, DOCKER_HOST and XDG_RUNTIME_DIR name sockets to mask (default process.env). */
  env?: Record<string, string | undefined>;
  /** True for a real path the policy never lets be read (a deny, not an ask); such entries of kept directories and of the install directory are masked (default: the built-in read denies, e.g. .env files). */
  hidden?: (real: string) => boolean;
  /** Names `hidden` exactly (see commandDenies): searches are remembered under it. A `hidden` given without it is judged afresh on every call. */
  hiddenKey?: string;
  /** The credential places below home (secretPaths of realHome, pencilHome and env), when the caller has them already. */
  secrets?: readonly string[];
  /** Where searches below kept and system directories are remembered (default the process's scanCache; null: none). */
  scanCache?: ScanCache | null;
  /**
   * Where searches are saved for later processes (Pencil's own state, which no command can reach): a process then
   * starts from the last one's listings and checks each directory's identity instead of reading a 130,000-entry
   * toolchain again. Default none.
   */
  indexDir?: string;
  /** Entries searched at most below one directory (default SCAN_LIMIT; tests give a small one). */
  scanLimit?: number;
  /** Paths of the host's bound unix sockets; those the covers leave reachable are masked (default hostUnixSockets()). */
  unixSockets?: readonly string[];
  /** The root whose top-level entries are covered unless they hold the system's programs (default "/"; tests give a directory of their own). */
  root?: string;
  /** More directories the command must reach, kept read-only where a cover would hide them (Bun for the network forwarder). */
  keep?: readonly string[];
  /**
   * System directories the command sees, searched whole for entries `hidden` denies, which are masked (default
   * SEARCHED_SYSTEM_DIRS: /etc and /usr/local, where people put configuration and software by hand).
   */
  systemDirs?: readonly string[];
}

/**
 * Top-level directories of the root that hold the system's programs,
 * libraries and configuration: the command sees these (read-only). Every
 * other top-level directory (/home, /root, /srv, /opt, /var, /mnt, /media and
 * whatever else the machine has) is covered, with only what the command needs
 * kept, and every top-level file is masked. /tmp, /run and /dev get their
 * private replacements.
 */
export const SYSTEM_TOPS: ReadonlySet<string> = new Set([
  "usr",
  "bin",
  "sbin",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "etc",
  "dev",
  "proc",
  "sys",
  "nix",
  "snap",
  "tmp",
  "run",
]);

/** System files that hold other users' secrets, masked always (a Pencil run as root could read them). */
const SYSTEM_SECRETS: readonly string[] = [
  "/etc/shadow",
  "/etc/gshadow",
  "/etc/shadow-",
  "/etc/gshadow-",
  "/etc/ssl/private",
];

/** Paths of the unix sockets bound on the host (its network namespace), from /proc/net/unix; abstract ones (no path) left out. */
export function hostUnixSockets(table = "/proc/net/unix"): string[] {
  let text: string;
  try {
    text = readFileSync(table, "utf8");
  } catch {
    // No socket table to read: only the sockets named by the environment are masked.
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
  const denies = input.hidden
    ? { hidden: input.hidden, key: input.hiddenKey ?? null }
    : commandDenies(builtinPolicy(input), []);
  const hidden = denies.hidden;
  const cache = input.scanCache === undefined ? scanCache : input.scanCache;
  const limit = input.scanLimit ?? SCAN_LIMIT;
  const searchBelow = (dir: string) =>
    cache !== null && denies.key !== null
      ? cache.below(dir, denies.key, hidden, limit, input.indexDir ?? null)
      : scanBelow(dir, hidden, limit);
  const secrets = new Set(input.secrets ?? secretPaths(input.realHome, input.pencilHome, input.env ?? process.env));
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
  // Everything outside the system's own directories: other projects (/srv/app/.env), other homes, data disks.
  const top = input.root ?? "/";
  for (const name of listDir(top)) {
    if (SYSTEM_TOPS.has(name)) continue;
    const p = join(top, name);
    let st;
    try {
      st = lstatSync(p);
    } catch {
      // Gone meanwhile: nothing to cover.
      continue;
    }
    if (st.isDirectory()) addCover(p, false, false, true);
    else if (!st.isSymbolicLink()) secrets.add(p); // a link leads into a directory judged on its own
  }
  // A workspace inside a system directory (/usr/local/src/app): its outermost ancestor below the system ones is covered
  // as well, so sibling projects (and their .env, .git/config) vanish; the workspace is kept in it like any other. Inside
  // another cover (/tmp/a/ws) it is one more, nested: what the command may write there stays the workspace alone.
  addCover(projectAncestor(top, ws), false, false, true);
  covers.sort((a, b) => a.path.length - b.path.length);
  // The innermost cover strictly above `p`, if any.
  const coverOf = (p: string): Cover | undefined => {
    let found: Cover | undefined;
    for (const c of covers)
      if (c.path !== p && isInside(c.path, p) && (!found || c.path.length > found.path.length)) found = c;
    return found;
  };

  const wanted: string[] = [ws, scratch, ...(input.keep ?? []).flatMap((k) => realOrNull(k) ?? [])];
  // Name resolution must keep working for commands given network access (/etc/resolv.conf often leads into /run).
  const resolver = realOrNull("/etc/resolv.conf");
  if (resolver !== null) wanted.push(dirname(resolver));
  /** Pairs (kept directory, directory of a linked command's target): every directory between them is checked for private files. */
  const linkPaths: [string, string][] = [];
  const env = input.env ?? process.env;
  const roots = managerRoots(input.realHome, env);
  const managersWanted: ManagerRoot[] = [];
  // A version manager's shims or proxies need its whole root (the versions, the manager, its settings), and the roots
  // it works with; the shims of one Pencil does not know by name are a `shims` directory in its root.
  const toolchainOf = (dir: string, fallback: () => string): string => {
    const m = managerRootOf(roots, dir);
    if (m && coverOf(m.root)) {
      for (const r of [m, ...companions(roots, m, input.realHome)]) {
        managersWanted.push(r);
        wanted.push(r.root);
      }
      return m.root;
    }
    if (basename(dir) === "shims" && coverOf(dirname(dir)) && dirname(dir) !== coverOf(dir)?.path) return dirname(dir);
    return fallback();
  };
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
    // Node's corepack shims (in /usr/bin as often as not) keep the package managers they fetched in a cache below home.
    if (hasCorepack(dir)) {
      const cache = roots.find((r) => r.manager.name === "corepack");
      if (cache && coverOf(cache.root)) {
        managersWanted.push(cache);
        wanted.push(cache.root);
      }
    }
    const base = coverOf(dir);
    // PATH directories in the open (/usr/bin) need nothing kept; listing them would cost more than the run.
    if (!base) continue;
    wanted.push(toolchainOf(dir, () => toolchainDir(base.path, dir, base.path === home)));
    // Linked commands (npm -g, npm link, bun add -g, pyenv's bin, uv's and pipx's tools) point elsewhere: keep what they point into.
    for (const name of listDir(dir)) {
      const target = linkTarget(join(dir, name));
      const at = target === null ? undefined : coverOf(target);
      if (target === null || !at) continue;
      const kept = toolchainOf(dirname(target), () => linkedDir(at.path, target, at.path === home));
      wanted.push(kept);
      linkPaths.push([kept, dirname(target)]);
    }
  }
  const secretList = [...secrets];
  const wantedList = [...new Set(wanted)].sort((a, b) => a.length - b.length);
  // A kept directory shows everything below it (a PATH entry's prefix can be a whole checkout): every entry the policy
  // denies at any depth (.env files, a repository's .git/config, key files) is masked, not only those at its top. One
  // too big to search whole is not kept, and what it held is kept on its own (the workspace inside it, say).
  const keptDenied = new Map<string, string[]>();
  const unscanned: string[] = [];
  for (let again = true; again; ) {
    again = false;
    for (const c of covers) c.keeps = [];
    for (const k of wantedList) {
      const c = coverOf(k);
      // A keep inside a secret would show it; a keep inside another one comes with it.
      if (!c || unscanned.includes(k) || secretList.some((x) => isInside(x, k)) || c.keeps.some((o) => isInside(o, k)))
        continue;
      c.keeps.push(k);
    }
    for (const k of covers.flatMap((c) => c.keeps)) {
      if (k === ws || k === scratch || keptDenied.has(k)) continue;
      const found = searchBelow(k);
      if (found.complete) keptDenied.set(k, found.denied);
      else {
        unscanned.push(k);
        again = true;
      }
    }
  }
  // The version files of the workspace's ancestors that a cover hides (between home and the workspace, say).
  for (let a = dirname(ws); ; a = dirname(a)) {
    let c: Cover | undefined;
    for (const o of covers) if (isInside(o.path, a) && (!c || o.path.length > c.path.length)) c = o;
    if (c && c.with === "dir" && !c.keeps.some((k) => isInside(k, a))) {
      for (const name of VERSION_FILES) {
        const p = join(a, name);
        if (isFile(p) && !secretList.some((x) => isInside(x, p))) (c.files ??= []).push(p);
      }
    }
    if (a === "/" || a === dirname(a)) break;
  }
  for (const c of covers) {
    // A home that is not a directory gets no mount point: its cover then fails, as it must.
    const inner = covers
      .filter((o) => coverOf(o.path) === c && !c.keeps.some((k) => isInside(k, o.path)) && isDir(o.path))
      .map((o) => o.path);
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
  for (const dir of input.systemDirs ?? SEARCHED_SYSTEM_DIRS) {
    const found = searchBelow(dir);
    if (found.complete) for (const p of found.denied) secrets.add(p);
    else {
      secrets.add(dir);
      unscanned.push(dir);
    }
  }
  const own = input.installDir === undefined ? INSTALL_DIR : input.installDir;
  const installDir = own === null ? null : realOrNull(own);
  if (installDir !== null) scan(installDir);
  const kept = covers.flatMap((c) => c.keeps);
  for (const k of kept) for (const p of keptDenied.get(k) ?? []) secrets.add(p);
  for (const [k, to] of linkPaths) {
    if (!kept.some((o) => isInside(o, k))) continue;
    for (let d = to; isInside(k, d); d = dirname(d)) {
      scan(d);
      if (d === k) break;
    }
  }

  // Sockets of host services outside the covers: their directory when nothing the command needs lies in it, else the socket itself.
  const needed = [ws, scratch, ...kept, ...covers.map((c) => c.path)];
  const maskSocket = (socket: string | undefined) => {
    if (!socket || !isAbsolute(socket)) return;
    const real = realPathOrWritten(socket);
    const dir = dirname(real);
    secrets.add(dir !== "/" && !needed.some((n) => isInside(dir, n)) ? dir : real);
  };
  maskSocket(env.SSH_AUTH_SOCK);
  const dockerHost = env.DOCKER_HOST;
  if (dockerHost?.startsWith("unix://")) maskSocket(dockerHost.slice("unix://".length));
  for (const p of ["/run/docker.sock", "/var/run/docker.sock", ...SYSTEM_SECRETS]) secrets.add(p);
  // npm's global settings have no name the policy knows: masked here, and shown filtered like the others.
  for (const p of GLOBAL_NPMRC) if (isFile(p)) secrets.add(realPathOrWritten(p));
  // Every other bound socket the covers leave reachable (outside them, or inside a kept directory) is masked itself.
  const hiddenByCover = (p: string) => covers.some((c) => isInside(c.path, p)) && !kept.some((k) => isInside(k, p));
  for (const socket of input.unixSockets ?? hostUnixSockets()) {
    if (isInside(ws, socket) || isInside(scratch, socket)) continue; // the copy stands over the workspace; the scratch holds the run's own
    const real = realPathOrWritten(socket);
    if (!hiddenByCover(socket) || !hiddenByCover(real)) secrets.add(real);
  }
  const uid = process.getuid?.();
  for (const p of [uid === undefined ? null : `/run/user/${uid}`, env.XDG_RUNTIME_DIR]) {
    if (!p || !isAbsolute(p)) continue;
    const real = realPathOrWritten(p);
    if (real !== "/" && !needed.some((n) => isInside(real, n))) secrets.add(real);
  }
  // The managers shown: those whose root is kept (one too big to search stays covered).
  const shownManagers = managersWanted.filter(
    (m, i) => managersWanted.findIndex((o) => o.root === m.root) === i && kept.some((k) => isInside(k, m.root)),
  );
  const settings = [...secrets].filter(
    (p) =>
      isFilteredSettingsPath(p) &&
      !(home !== null && isInside(home, p) && !kept.some((k) => isInside(k, p))) &&
      isFile(p),
  );
  return {
    covers,
    secrets: [...secrets],
    settings,
    unscanned,
    managers: shownManagers.map((m) => ({ name: m.manager.name, root: m.root })),
    managerEnv: managerEnv(shownManagers, env),
  };
}

/**
 * Whether the sandbox under `hiding` shows the real path `real` to a command, read-only: outside every cover (/usr,
 * /etc, /lib…), or inside what its innermost cover keeps (a toolchain root on PATH), and not at or below a masked
 * secret. A link of the workspace that leads there is kept as a link in the scratch (a virtualenv's bin/python): it
 * shows nothing the command could not read at the target's own path.
 */
export function shownReadOnly(hiding: Hiding, real: string): boolean {
  if (hiding.secrets.some((x) => isInside(x, real))) return false;
  let innermost: Cover | undefined;
  for (const c of hiding.covers)
    if (isInside(c.path, real) && (!innermost || c.path.length > innermost.path.length)) innermost = c;
  if (!innermost) return true;
  if (innermost.writable) return false;
  return innermost.keeps.some((k) => isInside(k, real));
}

/** Directories of /usr (below `root`) that hold the toolchain itself, not projects: never covered as a workspace's ancestor. */
const USR_TOOLCHAIN: ReadonlySet<string> = new Set([
  "usr/local",
  "usr/bin",
  "usr/sbin",
  "usr/lib",
  "usr/lib32",
  "usr/lib64",
  "usr/libexec",
  "usr/include",
  "usr/share",
]);

/**
 * The outermost ancestor of the workspace `ws` (a real path below `root`) that is not a system directory (`root`
 * itself, a top-level SYSTEM_TOPS entry, or USR_TOOLCHAIN); null when the workspace's parent is one (or `ws` is not
 * below `root`). A top-level directory that is not a system one is covered anyway, so this matters only inside them.
 */
export function projectAncestor(root: string, ws: string): string | null {
  const rel = relative(root, ws);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return null;
  const parts = rel.split("/");
  for (let i = 1; i < parts.length; i++) {
    const prefix = parts.slice(0, i).join("/");
    if (i === 1 && SYSTEM_TOPS.has(prefix)) continue;
    if (USR_TOOLCHAIN.has(prefix)) continue;
    return join(root, prefix);
  }
  return null;
}

/**
 * HOME_CREDENTIALS below `realHome` (and, for those of ~/.config and ~/.local/share, where `env`'s XDG_CONFIG_HOME and
 * XDG_DATA_HOME move them), and `pencilHome`: each as given and as its real path (a linked ~/.ssh is masked where it
 * really is).
 */
export function secretPaths(
  realHome: string,
  pencilHome: string,
  env: Record<string, string | undefined> = {},
): string[] {
  const out = new Set<string>();
  const homes = new Set([resolve(realHome), realPathOrWritten(realHome)]);
  const given = [
    ...[...homes].flatMap((h) => HOME_CREDENTIALS.map((rel) => join(h, rel))),
    ...HOME_CREDENTIALS.flatMap((rel) => xdgPlace(rel, env) ?? []),
    resolve(pencilHome),
  ];
  for (const p of given) {
    out.add(p);
    out.add(realPathOrWritten(p));
  }
  return [...out];
}

/** What a command must not read, as a predicate on real paths, and a key naming it exactly (HidingInput.hiddenKey). */
export interface CommandDenies {
  /** True for a path `policy` denies run_command reading, or at or below one of `secrets`. */
  hidden: (real: string) => boolean;
  /** Every input the predicate's answers depend on, as text: equal keys, equal answers for every path. */
  key: string;
}

/** The read denies of `policy` for run_command, and anything at or below `secrets`; judged by path alone. */
export function commandDenies(policy: Policy, secrets: readonly string[]): CommandDenies {
  const hidden = (real: string) =>
    decide(policy, { tool: "run_command", access: "read", real }).decision === "deny" ||
    secrets.some((p) => isInside(p, real));
  return { hidden, key: JSON.stringify(["run_command read deny", pathPolicyKey(policy), secrets]) };
}

/**
 * What decidePath's read denies depend on: the secret directories and the Read rules (their bases already resolved
 * against the workspace). The workspace root is left out: it decides only whether a read is allowed or asked, never
 * whether it is denied, so two workspaces (or two MCP servers' private roots) share one remembered search.
 */
function pathPolicyKey(policy: PathPolicy): unknown {
  const rules = (["deny", "ask", "allow"] as const).map((g) =>
    policy.read[g].map((r) => [r.base, r.re?.source ?? null, r.re?.flags ?? null, r.result.decision]),
  );
  return [policy.secrets.map((s) => [s.lower, s.read.decision]), rules];
}

/** The built-in read denies (.env files, credentials, PENCIL_HOME). */
function builtinPolicy(input: HidingInput): Policy {
  return compilePolicy({ workspaceRoot: input.wsRoot, home: input.realHome, pencilHome: input.pencilHome, rules: [] });
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
    // Does not resolve: nothing there to keep or cover.
    return null;
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    // Missing or unreadable: not a directory to keep.
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return lstatSync(p).isFile();
  } catch {
    // Missing or unreadable: nothing to show.
    return false;
  }
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    // Missing: not a link.
    return false;
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    // Unreadable to Pencil: nothing in it is kept (covers hide it whole).
    return [];
  }
}

function linkTarget(p: string): string | null {
  try {
    return lstatSync(p).isSymbolicLink() ? realpathSync(p) : null;
  } catch {
    // Not a link, or one that leads nowhere: nothing to keep.
    return null;
  }
}
