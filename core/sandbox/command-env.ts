import { join, relative, resolve } from "node:path";
import { looksLikeCredential } from "../staging/flags.ts";
import type { Scratch } from "../scratch/types.ts";
import { isInside, realPathOrWritten } from "../workspace.ts";
import { XDG_DEFAULTS } from "./version-managers.ts";

/** True for environment variable names that may hold credentials: never passed to commands. */
export function looksSecret(name: string): boolean {
  const upper = name.toUpperCase();
  if (upper === "PWD" || upper === "OLDPWD") return false;
  // git's identity: AUTHOR holds "AUTH" but names a person, so `git commit` in a command keeps the owner's name.
  if (/^GIT_AUTHOR_(NAME|EMAIL|DATE)$/.test(upper)) return false;
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
  if (/(^|_)(SOCK|SOCKET)$/.test(upper) || /^(SSH|GPG|DBUS|DOCKER|PODMAN|TMUX|WAYLAND|KRB5|PULSE)_/.test(upper))
    return true;
  return ["DISPLAY", "XAUTHORITY", "ICEAUTHORITY", "STY", "TMUX", "XDG_RUNTIME_DIR", "VSCODE_IPC_HOOK_CLI"].includes(
    upper,
  );
}

/** Prefixes of Pencil's own configuration (its model, bot, brain and web keys and settings): none reaches a command. */
const PENCIL_OWN_PREFIXES: readonly string[] = [
  "PENCIL_",
  "GROQ_",
  "OPENROUTER_",
  "LOCAL_LLM_",
  "GEMINI_",
  "INSFORGE_",
  "FIRECRAWL_",
  "TELEGRAM_",
];

/** Names Pencil's configuration files (its own `.env`, `$PENCIL_HOME/.env`) defined in this process: Pencil's, not the owner's shell's. */
const configNames = new Set<string>();

/** Notes variables that came from Pencil's configuration files, so commands never get them. */
export function notePencilConfig(names: Iterable<string>): void {
  for (const name of names) configNames.add(name);
}

/** True for a variable of Pencil's own configuration (by prefix, or defined in a configuration file Pencil read). */
function isPencilOwn(name: string): boolean {
  const upper = name.toUpperCase();
  return configNames.has(name) || PENCIL_OWN_PREFIXES.some((p) => upper.startsWith(p));
}

/**
 * The owner's proxy settings: Pencil's proxy replaces them when the network is on, and with it off there is no
 * network to reach through them (their values are often credentialed URLs, too).
 */
const PROXY_NAMES: ReadonlySet<string> = new Set([
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "NO_PROXY",
  "FTP_PROXY",
  "NPM_CONFIG_PROXY",
  "NPM_CONFIG_HTTPS_PROXY",
  "YARN_HTTP_PROXY",
  "YARN_HTTPS_PROXY",
]);

/** Variables Pencil itself sets, whatever the owner's environment or the settings say: where the command may write. */
export const SCRATCH_BOUND: readonly string[] = ["HOME", "TMPDIR", "TMP", "TEMP"];

/** Why a variable of the owner's environment does not reach the command. */
export type EnvDropReason = "pencil" | "secret-name" | "secret-value" | "host-socket" | "proxy" | "settings";

/** What each reason means, in words, for doctor and the docs. */
export const DROP_REASONS: Readonly<Record<EnvDropReason, string>> = {
  pencil: "Pencil's own configuration",
  "secret-name": "its name looks like a credential",
  "secret-value": "its value looks like a credential",
  "host-socket": "it leads to a host service's socket",
  proxy: "the owner's proxy (Pencil's own replaces it when the network is on)",
  settings: "removed by sandbox.env",
};

/** Why a variable cannot reach a command at all (whoever asks), or null when it may. */
export function refusedVariable(name: string, value: string | null): EnvDropReason | null {
  if (isPencilOwn(name)) return "pencil";
  if (namesHostSocket(name)) return "host-socket";
  if (looksSecret(name)) return "secret-name";
  if (value !== null && looksLikeCredential(`${name}=${value}`)) return "secret-value";
  return null;
}

/**
 * `sandbox.env` of the settings, merged: variables to set (a value) or remove (null), the owner's file first. A
 * workspace file's entries only add variables nobody else has set (`addOnly`): it cannot override or re-add what the
 * owner's environment, the owner's settings or Pencil decided.
 */
export interface EnvSettings {
  /** From the owner's settings file: set or remove anything a command may have. */
  owner: Record<string, string | null>;
  /** From the workspace's settings file: remove anything, add only what is absent. */
  workspace: Record<string, string | null>;
}

/** A group of variables set on top of the owner's environment, and who sets them (doctor names it). */
interface EnvLayer {
  by: string;
  vars: Record<string, string>;
}

/** A command's environment as planned: what it gets, who set what, and what of the owner's it does not get and why. */
export interface CommandEnvPlan {
  env: Record<string, string>;
  /** Variables not the owner's own, with who set them ("Pencil", "sandbox.env (your settings)", a layer's `by`). */
  set: { name: string; by: string }[];
  /** The owner's variables (and asked-for ones) left out, and why. */
  dropped: { name: string; why: EnvDropReason }[];
}

/** What planCommandEnv adds to the owner's environment. */
export interface CommandEnvInput {
  /** Extra variables (an MCP server's own `env`); any that may not reach a command is dropped. */
  extra?: Record<string, string>;
  /** The merged sandbox.env settings. */
  settings?: EnvSettings;
  /** More layers set by Pencil (the network proxy's variables, git's identity…), applied last, in order. */
  layers?: EnvLayer[];
  /** The owner's real home: XDG base directories the owner's environment puts inside it move with HOME (XDG_MOVED). */
  realHome?: string;
}

/** The XDG base directories that, set inside the owner's home, lead a command to the same place below its own HOME. */
const XDG_MOVED: readonly string[] = XDG_DEFAULTS.map(([variable]) => variable);

/**
 * Where `value` (an XDG directory of the owner's) lies in `realHome`, as a path relative to it (as given, or both
 * resolved through links); null when it is not an absolute path inside home. "" for home itself.
 */
export function relativeToHome(realHome: string, value: string): string | null {
  if (!value.startsWith("/")) return null;
  const [h, v] = [resolve(realHome), resolve(value)];
  if (isInside(h, v)) return relative(h, v);
  // Only when the paths as written disagree are the links on the way resolved (an lstat a component).
  const [rh, rv] = [realPathOrWritten(realHome), realPathOrWritten(value)];
  return isInside(rh, rv) ? relative(rh, rv) : null;
}

/**
 * The command's environment: the owner's (the shell that started Pencil), without Pencil's own configuration,
 * without variables whose names or values look like credentials or that lead to a host socket, without the owner's
 * proxy; then sandbox.env; then HOME and TMPDIR in the scratch and Pencil's layers. Nothing else is forced: a program
 * sees no `CI`, `NO_COLOR` or `TERM` the owner did not have (its standard input is empty, which is what keeps it from
 * prompting).
 */
export function planCommandEnv(
  parent: Record<string, string | undefined>,
  s: Pick<Scratch, "home" | "tmp">,
  input: CommandEnvInput = {},
): CommandEnvPlan {
  const env: Record<string, string> = {};
  const set = new Map<string, string>();
  const dropped = new Map<string, EnvDropReason>();
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined || name === "" || name.includes("=")) continue;
    const why = PROXY_NAMES.has(name.toUpperCase()) ? "proxy" : refusedVariable(name, value);
    if (why) dropped.set(name, why);
    else env[name] = value;
  }
  const put = (name: string, value: string, by: string) => {
    const why = refusedVariable(name, value);
    if (why) {
      dropped.set(name, why);
      return;
    }
    env[name] = value;
    set.set(name, by);
  };
  for (const [name, value] of Object.entries(input.extra ?? {})) put(name, value, "the server's settings");
  const ownerRemoved = new Set<string>();
  for (const [name, value] of Object.entries(input.settings?.owner ?? {})) {
    if (SCRATCH_BOUND.includes(name)) continue;
    if (value === null) {
      ownerRemoved.add(name);
      if (name in env) dropped.set(name, "settings");
      delete env[name];
      set.delete(name);
    } else put(name, value, "sandbox.env (your settings)");
  }
  for (const [name, value] of Object.entries(input.settings?.workspace ?? {})) {
    if (SCRATCH_BOUND.includes(name)) continue;
    if (value === null) {
      if (name in env) dropped.set(name, "settings");
      delete env[name];
      set.delete(name);
    } else if (!(name in env) && !ownerRemoved.has(name) && !dropped.has(name))
      put(name, value, "sandbox.env (the workspace's settings)");
  }
  env.PATH = commandPath(parent, env.PATH);
  for (const [name, value] of [
    ["HOME", s.home],
    ["TMPDIR", s.tmp],
    ["TMP", s.tmp],
    ["TEMP", s.tmp],
    // Git asks for credentials on the terminal; there is none, so it should fail at once rather than try.
    ["GIT_TERMINAL_PROMPT", "0"],
  ] as const) {
    env[name] = value;
    set.set(name, "Pencil");
  }
  // The command's HOME is its own, and the owner's home is covered: an XDG directory set inside it (XDG_CONFIG_HOME=~/.xdg)
  // would lead nowhere, so it leads to the same place below the command's HOME, where the owner's settings are copied.
  if (input.realHome)
    for (const name of XDG_MOVED) {
      const value = env[name];
      const rel = value === undefined ? null : relativeToHome(input.realHome, value);
      if (rel === null) continue;
      env[name] = rel === "" ? s.home : join(s.home, rel);
      set.set(name, "Pencil (your XDG directory, moved with HOME)");
    }
  for (const layer of input.layers ?? [])
    for (const [name, value] of Object.entries(layer.vars)) {
      env[name] = value;
      set.set(name, layer.by);
    }
  return {
    env,
    set: [...set].map(([name, by]) => ({ name, by })),
    dropped: [...dropped].map(([name, why]) => ({ name, why })),
  };
}

/** The command's environment (see planCommandEnv); `extra` as CommandEnvInput.extra. */
export function commandEnv(
  parent: Record<string, string | undefined>,
  s: Pick<Scratch, "home" | "tmp">,
  extra: Record<string, string> = {},
  settings?: EnvSettings,
): Record<string, string> {
  return planCommandEnv(parent, s, { extra, ...(settings ? { settings } : {}) }).env;
}

/** The command's PATH: `override` (sandbox.env's), else the parent's, else a minimal system one. */
export function commandPath(parent: Record<string, string | undefined>, override?: string): string {
  return override || parent.PATH || "/usr/local/bin:/usr/bin:/bin";
}
