// Decisions on paths (Read and Edit): the built-in protections — .env files,
// credential files and directories, .git, .pencil, PENCIL_HOME, writes outside the
// workspace — then the rules' deny > ask > allow, then the defaults. Pure and
// allocation-free per decision; the disk is touched only when compiling.
import picomatch from "picomatch";
import { join, posix, resolve } from "node:path";
import {
  escapeGlob,
  RULE_HELP,
  ruleDecision,
  ruleOrigin,
  ruleTarget,
  ruleText,
  verdict as result,
  type Decision,
  type Groups,
  type Rule,
} from "./policy-rules.ts";
import { realPathLoose } from "../workspace.ts";
import { ConfigError } from "../errors/config-error.ts";

/** A compiled Read or Edit rule: its real base, and the glob below it as a regex. */
interface PathRule {
  base: string;
  baseSlash: string;
  /** Null for a literal pattern: it covers the path itself and everything below it. */
  re: RegExp | null;
  result: Decision;
}

/** A directory that is never read or written, with the verdicts that say why. */
interface SecretDir {
  /** ASCII-lowercased absolute path: compared case-insensitively, since macOS resolves `.SSH` to `.ssh`. */
  lower: string;
  read: Decision;
  write: Decision;
}

/** The path half of a compiled policy: everything decidePath needs, with no file system access left to do. */
export interface PathPolicy {
  readonly root: string;
  readonly rootSlash: string;
  readonly secrets: readonly SecretDir[];
  readonly outsideWrite: Decision;
  readonly read: Groups<PathRule>;
  readonly edit: Groups<PathRule>;
}

/**
 * Places under the home directory that hold credentials (relative to it): never
 * read or written, whatever a settings file says, and masked in run_command's
 * sandbox. The README's opening promises name the first three; the rest hold tokens just as
 * surely (registry, cloud and database logins, git and GitHub credentials, keyrings).
 */
export const HOME_CREDENTIALS: readonly string[] = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".netrc",
  ".npmrc",
  ".pypirc",
  ".git-credentials",
  ".docker/config.json",
  ".kube",
  ".config/gh",
  ".config/gcloud",
  ".azure",
  ".password-store",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".local/share/keyrings",
  ".config/git/credentials",
  ".pgpass",
  ".vault-token",
  ".gem/credentials",
  ".config/hub",
  ".terraform.d/credentials.tfrc.json",
  ".local/share/uv/credentials",
];

/**
 * Names of files that hold credentials wherever they are, the workspace included
 * (direnv's exports, registry and machine logins): never read or written, whatever
 * a settings file says, and left out of (or masked in) run_command's sandbox.
 * Lowercase; compared case-insensitively, like `.env`.
 */
const SECRET_FILE_NAMES: readonly string[] = [
  ".envrc",
  ".netrc",
  "_netrc",
  ".npmrc",
  ".pypirc",
  // Package managers' settings hold registry tokens as often as not: commands see them with the tokens removed.
  ".yarnrc",
  ".yarnrc.yml",
  "pip.conf",
  "pip.ini",
  ".git-credentials",
  ".pgpass",
  ".vault-token",
];

/** Endings of key and certificate-bundle files, which hold private keys as often as not (PuTTY keys, Apple's .p8 signing keys and Java keystores included). */
const SECRET_FILE_SUFFIXES: readonly string[] = [".pem", ".key", ".p12", ".pfx", ".ppk", ".p8", ".jks", ".keystore"];

/**
 * Certificate-authority bundles by the names certifi, curl and Debian give them:
 * public certificates only, which TLS clients in a command's dependencies must read.
 */
const PUBLIC_BUNDLES: readonly string[] = ["cacert.pem", "ca-bundle.pem", "ca-certificates.pem"];

/** SSH private keys by their usual names (id_rsa, id_ed25519, id_ecdsa_sk…); the `.pub` halves are public and stay readable. */
const PRIVATE_KEY_NAME = /^id_[a-z0-9_]+$/i;

/** True for a file name (one path component) that the built-in list treats as a credential file (see SECRET_FILE_NAMES). Allocation-free: it runs on every decision. */
export function isSecretFileName(name: string): boolean {
  const n = name.length;
  if (n < 4) return false;
  const first = name.charCodeAt(0);
  // The listed names start with ".", "_" or "p" (pip.conf): other names skip the list.
  if (first === DOT || first === UNDERSCORE || (first | 32) === 112) {
    for (const s of SECRET_FILE_NAMES) if (equalsCI(name, 0, n, s)) return true;
  }
  if (
    (first | 32) === 105 &&
    (name.charCodeAt(1) | 32) === 100 &&
    name.charCodeAt(2) === UNDERSCORE &&
    PRIVATE_KEY_NAME.test(name)
  )
    return true;
  const dot = name.lastIndexOf(".");
  if (dot > 0)
    for (const s of SECRET_FILE_SUFFIXES)
      if (equalsCI(name, dot, n - dot, s)) return !PUBLIC_BUNDLES.some((b) => equalsCI(name, 0, n, b));
  return false;
}

const ENV_READ = result(
  "deny",
  "Reading .env files is never allowed: secrets stay out of the model's context. Ask the user to paste the values you need (a .env.example with placeholders is readable).",
);
const ENV_WRITE = result(
  "deny",
  "Writing .env files is never allowed: secrets are managed by the user. Put placeholders in .env.example and tell the user which variables to set.",
);
const SECRET_FILE_READ = result(
  "deny",
  "Reading this file is never allowed: files of this kind (.envrc, .npmrc, .yarnrc.yml, pip.conf, .pypirc, .netrc, *.pem, *.key, *.ppk, *.jks, id_* private keys) hold credentials that must never reach the model. Ask the user for the non-secret information you need.",
);
const SECRET_FILE_WRITE = result(
  "deny",
  "Writing this file is never allowed: files of this kind (.envrc, .npmrc, .yarnrc.yml, pip.conf, .pypirc, .netrc, *.pem, *.key, *.ppk, *.jks, id_* private keys) hold credentials, which the user manages. Tell the user what to change there.",
);
const GIT_CONFIG_READ = result(
  "deny",
  "Reading .git/config is never allowed: a remote URL there can carry a password or token (https://user:TOKEN@host). Use git commands through run_command for what you need (e.g. git status, git log).",
);
const PROC_SECRET_READ = result(
  "deny",
  "Reading a process's environment or memory (/proc/PID/environ, /proc/PID/mem) is never allowed: it holds API keys and tokens (Pencil's own among them). Ask the user for the non-secret setting you need.",
);
const GIT_WRITE = result(
  "deny",
  "Writing inside .git is never allowed: repository metadata changes only through git commands the user runs. Edit the working-tree files instead.",
);
const PENCIL_WRITE = result(
  "deny",
  "Writing inside .pencil is never allowed: it holds this workspace's Pencil settings, which only the user changes. Tell the user what to change instead.",
);
const INSIDE_READ = result("allow", "Reading inside the workspace is allowed.");
const INSIDE_WRITE = result(
  "allow",
  "Writing inside the workspace is allowed: the change is staged for the user's review.",
);
const OUTSIDE_READ = result(
  "ask",
  "Reading outside the workspace needs the user's approval. If it is refused, work with the files inside the workspace.",
);
const NO_PATH = result(
  "deny",
  "The path was not resolved to an absolute real path before the permission check. This is a Pencil bug, not something to retry with the same input.",
);

/** Compiles the Read and Edit rules and the built-in protections against the workspace, home and PENCIL_HOME; resolves rule bases through symlinks. */
export function compilePathPolicy(input: {
  workspaceRoot: string;
  home: string;
  pencilHome: string;
  rules: readonly Rule[];
}): PathPolicy {
  const root = realOf(input.workspaceRoot);
  const homeLexical = resolve(input.home);
  const homeReal = realOf(input.home);
  const roots = { workspaceRoot: root, home: homeReal };

  const secrets: SecretDir[] = [];
  const addSecret = (dirs: string[], read: Decision, write: Decision) => {
    for (const dir of new Set(dirs.map(asciiLower))) secrets.push({ lower: dir, read, write });
  };
  for (const name of HOME_CREDENTIALS) {
    const why = `it holds credentials that must never reach the model`;
    addSecret(
      [join(homeLexical, name), join(homeReal, name), realOf(join(homeLexical, name))],
      result(
        "deny",
        `Reading ~/${name} is never allowed: ${why}. Ask the user for the non-secret information you need.`,
      ),
      result("deny", `Writing ~/${name} is never allowed: ${why}. Tell the user what to change there.`),
    );
  }
  const pencilWhy = "PENCIL_HOME holds Pencil's own state (changesets, journal, notes, settings)";
  addSecret(
    [resolve(input.pencilHome), realOf(input.pencilHome)],
    result(
      "deny",
      `Reading ${input.pencilHome} is never allowed: ${pencilWhy}. Work with the workspace files instead.`,
    ),
    result("deny", `Writing ${input.pencilHome} is never allowed: ${pencilWhy}. Only the user changes it.`),
  );

  const policy: PathPolicy = {
    root,
    rootSlash: root === "/" ? "/" : root + "/",
    secrets,
    outsideWrite: result(
      "deny",
      `Writing outside the workspace (${root}) is never allowed. Write inside the workspace instead, or ask the user to run Pencil on the directory you need.`,
    ),
    read: { deny: [], ask: [], allow: [] },
    edit: { deny: [], ask: [], allow: [] },
  };
  for (const rule of input.rules) {
    if (rule.kind !== "Read" && rule.kind !== "Edit") continue;
    const text = ruleText(rule);
    const { base, glob } = ruleTarget(rule, roots);
    const baseSlash = base === "/" ? "/" : base + "/";
    let re: RegExp | null = null;
    if (glob !== null) {
      const full = (base === "/" ? "/" : escapeGlob(base) + "/") + glob;
      try {
        re = picomatch.makeRe(full, { dot: true });
      } catch (error) {
        throw new ConfigError(
          `Bad permission rule ${JSON.stringify(text)} ${ruleOrigin(rule.source)}: the glob does not compile (${(error as Error).message}). ${RULE_HELP}`,
          rule.source,
          text,
        );
      }
    }
    const verb = rule.kind === "Read" ? "reading this path" : "writing this path";
    const group = rule.kind === "Read" ? policy.read : policy.edit;
    group[rule.effect].push({ base, baseSlash, re, result: ruleDecision(rule, text, verb) });
  }
  return policy;
}

/** Judges a read or write of `real` (an absolute real path): built-in denies, then deny > ask > allow rules, then defaults. */
export function decidePath(policy: PathPolicy, access: "read" | "write", given: string | undefined): Decision {
  let real = given;
  if (typeof real !== "string" || real.charCodeAt(0) !== SLASH) return NO_PATH;

  let inside = real === policy.root || real.startsWith(policy.rootSlash);
  let flags = scanComponents(real, inside ? policy.rootSlash.length : Infinity);
  if (flags & UNNORMAL) {
    // Callers pass real paths; a stray `..` or `//` must not slip past the prefix checks.
    real = posix.normalize(real);
    if (real.length > 1 && real.endsWith("/")) real = real.slice(0, -1);
    inside = real === policy.root || real.startsWith(policy.rootSlash);
    flags = scanComponents(real, inside ? policy.rootSlash.length : Infinity);
  }
  const write = access === "write";
  if (flags & ENV) return write ? ENV_WRITE : ENV_READ;
  const name = real.slice(real.lastIndexOf("/") + 1);
  if (isSecretFileName(name)) return write ? SECRET_FILE_WRITE : SECRET_FILE_READ;
  if (!write && real.startsWith("/proc/") && (name === "environ" || name === "mem")) return PROC_SECRET_READ;
  // Any repository's config, not only the workspace's: a worktree or submodule keeps its remote URLs in the main repository's .git, outside the workspace.
  if (
    !write &&
    flags & GIT_ANYWHERE &&
    (equalsCI(name, 0, name.length, "config") || equalsCI(name, 0, name.length, "config.worktree"))
  )
    return GIT_CONFIG_READ;
  const secrets = policy.secrets;
  for (let i = 0; i < secrets.length; i++) {
    const s = secrets[i]!;
    if (underCI(real, s.lower)) return write ? s.write : s.read;
  }
  if (write) {
    if (flags & GIT) return GIT_WRITE;
    if (flags & PENCIL) return PENCIL_WRITE;
    if (!inside) return policy.outsideWrite;
  }
  const groups = write ? policy.edit : policy.read;
  return (
    firstPathMatch(groups.deny, real) ??
    firstPathMatch(groups.ask, real) ??
    firstPathMatch(groups.allow, real) ??
    (write ? INSIDE_WRITE : inside ? INSIDE_READ : OUTSIDE_READ)
  );
}

function firstPathMatch(rules: PathRule[], real: string): Decision | undefined {
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]!;
    if (real !== r.base && !real.startsWith(r.baseSlash)) continue;
    if (r.re === null || r.re.test(real)) return r.result;
  }
  return undefined;
}

const SLASH = 47;
const DOT = 46;
const UNDERSCORE = 95;
const UNNORMAL = 1;
const ENV = 2;
const GIT = 4;
const PENCIL = 8;
const GIT_ANYWHERE = 16;

/**
 * One pass over the path's components: flags `.`/`..`/empty components, `.env`
 * names and `.git` components anywhere (GIT_ANYWHERE), and `.git`/`.pencil` at or after `metaFrom` (the part inside the workspace).
 */
function scanComponents(path: string, metaFrom: number): number {
  let flags = 0;
  const len = path.length;
  let start = 1;
  for (let i = 1; i <= len; i++) {
    if (i < len && path.charCodeAt(i) !== SLASH) continue;
    const n = i - start;
    if (n === 0) {
      if (len > 1) flags |= UNNORMAL;
    } else if (path.charCodeAt(start) === DOT) {
      if (n === 1 || (n === 2 && path.charCodeAt(start + 1) === DOT)) flags |= UNNORMAL;
      else if (isEnvName(path, start, n)) flags |= ENV;
      else if (equalsCI(path, start, n, ".git")) flags |= start >= metaFrom ? GIT | GIT_ANYWHERE : GIT_ANYWHERE;
      else if (start >= metaFrom && equalsCI(path, start, n, ".pencil")) flags |= PENCIL;
    }
    start = i + 1;
  }
  return flags;
}

const ENV_EXCEPTIONS = ["example", "sample", "template"];

/** `.env` or `.env.*`, case-insensitively, except `.env.example`, `.env.sample`, `.env.template`. */
function isEnvName(s: string, start: number, n: number): boolean {
  if (n < 4 || !equalsCI(s, start, 4, ".env")) return false;
  if (n === 4) return true;
  if (s.charCodeAt(start + 4) !== DOT) return false;
  for (const ex of ENV_EXCEPTIONS) if (n - 5 === ex.length && equalsCI(s, start + 5, ex.length, ex)) return false;
  return true;
}

/** True when s[start, start+n) equals `lower` (lowercase ASCII), ignoring ASCII case. */
function equalsCI(s: string, start: number, n: number, lower: string): boolean {
  if (n !== lower.length) return false;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(start + i);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/** True when `path` is `dirLower` or below it, ignoring ASCII case. */
function underCI(path: string, dirLower: string): boolean {
  const n = dirLower.length;
  if (n === 1) return true;
  if (path.length < n || (path.length > n && path.charCodeAt(n) !== SLASH)) return false;
  return equalsCI(path, 0, n, dirLower);
}

function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

// Not realPathOrWritten: a protected place (the workspace, home, PENCIL_HOME) that cannot be resolved is an error
// here, never judged as written, so no protection is built on a guess.
function realOf(p: string): string {
  return realPathLoose(resolve(p)).real;
}
