import { existsSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { isInside } from "../workspace.ts";

/**
 * A toolchain or version manager whose whole root a command must see when PATH leads into it: its shims or proxies
 * look up the versions, settings and the manager itself below that root. `home` is where it lives by default
 * (relative to the owner's home), `variable` the one that moves it, which a command started with another HOME needs
 * to find it; `with` names roots it works with (rustup's proxies in ~/.cargo/bin need ~/.rustup).
 */
export interface VersionManager {
  name: string;
  home: string;
  variable?: string;
  with?: readonly string[];
}

/** The managers Pencil knows, each with its default root below home. */
export const VERSION_MANAGERS: readonly VersionManager[] = [
  { name: "pyenv", home: ".pyenv", variable: "PYENV_ROOT" },
  { name: "rbenv", home: ".rbenv", variable: "RBENV_ROOT" },
  { name: "nodenv", home: ".nodenv", variable: "NODENV_ROOT" },
  { name: "goenv", home: ".goenv", variable: "GOENV_ROOT" },
  { name: "nvm", home: ".nvm", variable: "NVM_DIR" },
  { name: "fnm", home: ".local/share/fnm", variable: "FNM_DIR" },
  { name: "fnm", home: ".fnm", variable: "FNM_DIR" },
  { name: "volta", home: ".volta", variable: "VOLTA_HOME" },
  { name: "asdf", home: ".asdf", variable: "ASDF_DATA_DIR" },
  { name: "mise", home: ".local/share/mise", variable: "MISE_DATA_DIR" },
  { name: "cargo", home: ".cargo", variable: "CARGO_HOME", with: [".rustup"] },
  { name: "rustup", home: ".rustup", variable: "RUSTUP_HOME", with: [".cargo"] },
  { name: "sdkman", home: ".sdkman", variable: "SDKMAN_DIR" },
  { name: "uv", home: ".local/share/uv" },
  { name: "pipx", home: ".local/share/pipx", variable: "PIPX_HOME" },
  { name: "bun", home: ".bun", variable: "BUN_INSTALL" },
  { name: "deno", home: ".deno", variable: "DENO_INSTALL" },
  { name: "corepack", home: ".cache/node/corepack", variable: "COREPACK_HOME" },
  { name: "fnm multishells", home: ".local/state/fnm_multishells" },
];

/** A version manager's root as found on this machine: its real path, and the variable naming it. */
export interface ManagerRoot {
  manager: VersionManager;
  /** Real path of the root. */
  root: string;
}

/**
 * The roots of the known managers here: where the owner's environment puts them (PYENV_ROOT, NVM_DIR…), else their
 * default place below `home`; only those that exist as directories, as real paths.
 */
export function managerRoots(home: string, env: Record<string, string | undefined>): ManagerRoot[] {
  const out: ManagerRoot[] = [];
  for (const manager of VERSION_MANAGERS) {
    const given = manager.variable ? env[manager.variable] : undefined;
    for (const p of [
      given && isAbsolute(given) ? given : null,
      xdgPlace(manager.home, env),
      join(home, manager.home),
    ]) {
      const root = p ? realDir(p) : null;
      if (root && !out.some((o) => o.root === root)) out.push({ manager, root });
    }
  }
  return out;
}

/** The XDG base directories and the default place below home each stands for (the prefixes are disjoint). */
export const XDG_DEFAULTS: readonly [variable: string, below: string][] = [
  ["XDG_CONFIG_HOME", ".config/"],
  ["XDG_DATA_HOME", ".local/share/"],
  ["XDG_CACHE_HOME", ".cache/"],
  ["XDG_STATE_HOME", ".local/state/"],
];

/**
 * Where `rel` (a place below home such as `.local/share/mise`) is when the owner's environment moves its XDG base
 * directory (XDG_DATA_HOME=/data/share: /data/share/mise); null when it does not.
 */
export function xdgPlace(rel: string, env: Record<string, string | undefined>): string | null {
  for (const [variable, below] of XDG_DEFAULTS) {
    const base = env[variable];
    if (rel.startsWith(below) && base && isAbsolute(base)) return join(base, rel.slice(below.length));
  }
  return null;
}

/** The root of a known manager that `dir` (a real path) lies in, the innermost; null when none. */
export function managerRootOf(roots: readonly ManagerRoot[], dir: string): ManagerRoot | null {
  let found: ManagerRoot | null = null;
  for (const r of roots) if (isInside(r.root, dir) && (!found || r.root.length > found.root.length)) found = r;
  return found;
}

/** The roots a kept one works with (rustup's for cargo's), among those found. */
export function companions(roots: readonly ManagerRoot[], kept: ManagerRoot, home: string): ManagerRoot[] {
  const want = (kept.manager.with ?? []).map((rel) => realDir(join(home, rel)));
  return roots.filter((r) => want.includes(r.root));
}

/**
 * The variables a command needs to find the managers whose roots it is shown, for those the owner's environment
 * does not set: its HOME is the scratch's, where a manager would look by default (asdf, volta, rustup, corepack).
 */
export function managerEnv(
  kept: readonly ManagerRoot[],
  env: Record<string, string | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { manager, root } of kept) {
    const v = manager.variable;
    if (v && !env[v] && !(v in out)) out[v] = root;
  }
  return out;
}

/** True when `dir` holds `corepack` (Node's package-manager shims, whose cache lives below home). */
export function hasCorepack(dir: string): boolean {
  return existsSync(join(dir, "corepack"));
}

function realDir(p: string): string | null {
  try {
    const real = realpathSync(p);
    return statSync(real).isDirectory() ? real : null;
  } catch {
    // Does not resolve: no version manager root there.
    return null;
  }
}
