import picomatch from "picomatch";
import { isAbsolute, join, posix, resolve } from "node:path";
import { decideCommand, runPattern, type RunRules } from "./command-policy.ts";
import { realPathLoose } from "./workspace.ts";
import { UsageFailure } from "./errors.ts";

/** Which tools a rule covers: Read → read_file/list_files/search, Edit → every write tool, Run → run_command, Net → requests that leave the machine (fetch_url, web_search), by host. */
export type RuleKind = "Read" | "Edit" | "Run" | "Net";

/** What a matching rule decides. */
export type Effect = "allow" | "ask" | "deny";

/** One permission rule as data: `Kind(pattern)` with its effect and where it came from. */
export interface Rule {
  kind: RuleKind;
  /** The glob (Read/Edit) or command pattern (Run) between the parentheses, trimmed. */
  pattern: string;
  effect: Effect;
  /** The settings file path the rule came from, or the CLI flag (`--allow`, `--deny`). */
  source: string;
}

/** A settings file or rule that cannot be used; the CLI turns it into exit 2. */
export class ConfigError extends UsageFailure {
  override name = "ConfigError";
  override readonly label = "configuration error";
  /** The settings file (or CLI flag) at fault. */
  readonly file: string;
  /** The rule text at fault, when one rule is the problem. */
  readonly rule?: string;
  constructor(message: string, file: string, rule?: string) {
    super(message);
    this.file = file;
    this.rule = rule;
  }

  override get userMessage(): string {
    return `in ${this.file}${this.rule ? ` (rule ${this.rule})` : ""}: ${this.message}`;
  }
}

/** What a valid rule looks like: appended to every rule error. */
export const RULE_HELP =
  "A rule is Read(glob), Edit(glob), Run(command prefix*) or Net(host), e.g. Edit(src/generated/**), Read(../shared-lib/**), Read(~/notes/**), Run(bun test*) or Net(*.npmjs.org).";

const RULE_SHAPE = /^([A-Za-z_]+)\(([\s\S]*)\)$/;
const KINDS: readonly RuleKind[] = ["Read", "Edit", "Run", "Net"];
const KIND_HINTS: Record<string, RuleKind> = { write: "Edit", bash: "Run", shell: "Run", exec: "Run", command: "Run", network: "Net", host: "Net", fetch: "Net", web: "Net" };
/** A Net(...) pattern: a host name or address, `*` for any run of characters (`*.example.com`). */
const HOST_PATTERN = /^[A-Za-z0-9*.\-:[\]]+$/;

/** Parses `Kind(pattern)` into a Rule; throws ConfigError (naming `source` and the rule) when it is malformed. */
export function parseRule(text: string, effect: Effect, source: string): Rule {
  const fail = (why: string): never => {
    throw new ConfigError(`Bad permission rule ${JSON.stringify(text)} ${fromWhere(source)}: ${why}. ${RULE_HELP}`, source, text);
  };
  if (typeof text !== "string") fail("a rule must be a string");
  if (text.includes("\0")) fail("it contains a NUL byte");
  const m = RULE_SHAPE.exec(text.trim());
  if (!m) fail("it is not of the form Kind(pattern) with the pattern in parentheses");
  const [, kindText, inner] = m!;
  const kind = KINDS.find((k) => k === kindText);
  if (!kind) {
    const hint = KIND_HINTS[kindText!.toLowerCase()] ?? KINDS.find((k) => k.toLowerCase() === kindText!.toLowerCase());
    fail(`unknown kind "${kindText}"${hint ? ` (did you mean ${hint}?)` : ""}`);
  }
  const pattern = inner!.trim();
  if (pattern === "") fail("the pattern between the parentheses is empty");
  if (kind === "Net" && !HOST_PATTERN.test(pattern)) fail("a Net rule names a host (letters, digits, . - : and * only), e.g. Net(registry.npmjs.org) or Net(*.github.com)");
  if (kind === "Read" || kind === "Edit") {
    if (pattern.startsWith("~") && pattern !== "~" && !pattern.startsWith("~/")) {
      fail("only ~/ (your own home directory) is understood, not ~user");
    }
    const parts = pattern.split("/");
    const firstGlob = parts.findIndex((p) => picomatch.scan(p).isGlob);
    if (firstGlob !== -1 && parts.slice(firstGlob).includes("..")) {
      fail("'..' may only appear before the first wildcard");
    }
  }
  return { kind: kind!, pattern, effect, source };
}

/** The rule as written in settings, e.g. `Edit(src/generated/**)`. */
export function ruleText(rule: Rule): string {
  return `${rule.kind}(${rule.pattern})`;
}

/** Where a Read/Edit rule points once made absolute and real: the real static base, and the glob below it (null for a literal path). */
export interface RuleTarget {
  base: string;
  glob: string | null;
}

/**
 * Makes a Read/Edit pattern absolute (relative to the workspace root, `~/` to home),
 * normalises it, and resolves its static base through symlinks. Touches the disk
 * (lstat/readlink), so it runs when policies are compiled, never per decision.
 */
export function ruleTarget(rule: Rule, roots: { workspaceRoot: string; home: string }): RuleTarget {
  let p = rule.pattern;
  if (p === "~") p = roots.home;
  else if (p.startsWith("~/")) p = join(roots.home, p.slice(2));
  const absolute = posix.normalize(isAbsolute(p) ? p : join(roots.workspaceRoot, p));
  const trimmed = absolute.length > 1 && absolute.endsWith("/") ? absolute.slice(0, -1) : absolute;
  const scan = picomatch.scan(trimmed);
  const staticBase = scan.isGlob ? unescapeGlob(scan.base) || "/" : unescapeGlob(trimmed);
  let base: string;
  try {
    base = realPathLoose(staticBase).real;
  } catch (error) {
    throw new ConfigError(
      `Permission rule ${ruleText(rule)} ${fromWhere(rule.source)} cannot be resolved: ${(error as Error).message}`,
      rule.source,
      ruleText(rule),
    );
  }
  return { base, glob: scan.isGlob ? scan.glob : null };
}

/** What a tool call wants to do, as the policy judges it. */
export interface AccessRequest {
  /** The tool name (read_file, edit_file, run_command, ...). */
  tool: string;
  access: "read" | "write" | "run" | "net";
  /** Real absolute path, already resolved (symlinks followed) by the caller; required for read and write. */
  real?: string;
  /** The command line; required for run. */
  command?: string;
  /** The host a request goes to; required for net. */
  host?: string;
}

/** The verdict on one request; `reason` is written for the model, `rule` names the settings rule that decided (none for built-ins and defaults). */
export interface Decision {
  decision: Effect;
  reason: string;
  rule?: string;
  /** For a command: the irreversible action it performs (`git push`, `npm publish`…); such an ask is never remembered and refused with nobody to ask. */
  irreversible?: string;
}

/** Inputs of compilePolicy: the roots every pattern is resolved against, and the merged rules. */
export interface PolicyInput {
  workspaceRoot: string;
  home: string;
  pencilHome: string;
  rules: readonly Rule[];
}

interface PathRule {
  base: string;
  baseSlash: string;
  /** Null for a literal pattern: it covers the path itself and everything below it. */
  re: RegExp | null;
  result: Decision;
}

interface Groups<T> {
  deny: T[];
  ask: T[];
  allow: T[];
}

interface SecretDir {
  /** ASCII-lowercased absolute path: compared case-insensitively, since macOS resolves `.SSH` to `.ssh`. */
  lower: string;
  read: Decision;
  write: Decision;
}

/** A compiled policy: everything `decide` needs, with no file system access left to do. */
export interface Policy {
  readonly root: string;
  readonly rootSlash: string;
  readonly secrets: readonly SecretDir[];
  readonly outsideWrite: Decision;
  readonly read: Groups<PathRule>;
  readonly edit: Groups<PathRule>;
  readonly run: RunRules;
  readonly net: RunRules;
}

/**
 * Places under the home directory that hold credentials (relative to it): never
 * read or written, whatever a settings file says, and masked in run_command's
 * sandbox. The contract names the first three; the rest hold tokens just as
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
];

/**
 * Names of files that hold credentials wherever they are, the workspace included
 * (direnv's exports, registry and machine logins): never read or written, whatever
 * a settings file says, and left out of (or masked in) run_command's sandbox.
 * Lowercase; compared case-insensitively, like `.env`.
 */
export const SECRET_FILE_NAMES: readonly string[] = [".envrc", ".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass", ".vault-token"];

/** Endings of key and certificate-bundle files, which hold private keys as often as not (PuTTY keys, Apple's .p8 signing keys and Java keystores included). */
export const SECRET_FILE_SUFFIXES: readonly string[] = [".pem", ".key", ".p12", ".pfx", ".ppk", ".p8", ".jks", ".keystore"];

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
  if (first === DOT || first === UNDERSCORE) {
    for (const s of SECRET_FILE_NAMES) if (equalsCI(name, 0, n, s)) return true;
  }
  if ((first | 32) === 105 && (name.charCodeAt(1) | 32) === 100 && name.charCodeAt(2) === UNDERSCORE && PRIVATE_KEY_NAME.test(name)) return true;
  const dot = name.lastIndexOf(".");
  if (dot > 0) for (const s of SECRET_FILE_SUFFIXES) if (equalsCI(name, dot, n - dot, s)) return !PUBLIC_BUNDLES.some((b) => equalsCI(name, 0, n, b));
  return false;
}

const result = (decision: Effect, reason: string, rule?: string): Decision =>
  Object.freeze(rule === undefined ? { decision, reason } : { decision, reason, rule });

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
  "Reading this file is never allowed: files of this kind (.envrc, .npmrc, .pypirc, .netrc, *.pem, *.key, *.ppk, *.jks, id_* private keys) hold credentials that must never reach the model. Ask the user for the non-secret information you need.",
);
const SECRET_FILE_WRITE = result(
  "deny",
  "Writing this file is never allowed: files of this kind (.envrc, .npmrc, .pypirc, .netrc, *.pem, *.key, *.ppk, *.jks, id_* private keys) hold credentials, which the user manages. Tell the user what to change there.",
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
const INSIDE_WRITE = result("allow", "Writing inside the workspace is allowed: the change is staged for the user's review.");
const OUTSIDE_READ = result(
  "ask",
  "Reading outside the workspace needs the user's approval. If it is refused, work with the files inside the workspace.",
);
const NO_PATH = result(
  "deny",
  "The path was not resolved to an absolute real path before the permission check. This is a Pencil bug, not something to retry with the same input.",
);
const BAD_ACCESS = result("deny", "Unknown kind of access: only read, write and run are judged. This is a Pencil bug.");

/** Compiles rules against the workspace, home and PENCIL_HOME; the only file system access (symlink resolution of rule bases) happens here. */
export function compilePolicy(input: PolicyInput): Policy {
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
      result("deny", `Reading ~/${name} is never allowed: ${why}. Ask the user for the non-secret information you need.`),
      result("deny", `Writing ~/${name} is never allowed: ${why}. Tell the user what to change there.`),
    );
  }
  const pencilWhy = "PENCIL_HOME holds Pencil's own state (changesets, journal, notes, settings)";
  addSecret(
    [resolve(input.pencilHome), realOf(input.pencilHome)],
    result("deny", `Reading ${input.pencilHome} is never allowed: ${pencilWhy}. Work with the workspace files instead.`),
    result("deny", `Writing ${input.pencilHome} is never allowed: ${pencilWhy}. Only the user changes it.`),
  );

  const policy: Policy = {
    root,
    rootSlash: root === "/" ? "/" : root + "/",
    secrets,
    outsideWrite: result(
      "deny",
      `Writing outside the workspace (${root}) is never allowed. Write inside the workspace instead, or ask the user to run Pencil on the directory you need.`,
    ),
    read: { deny: [], ask: [], allow: [] },
    edit: { deny: [], ask: [], allow: [] },
    run: { deny: [], ask: [], allow: [] },
    net: { deny: [], ask: [], allow: [] },
  };
  for (const rule of input.rules) {
    const text = ruleText(rule);
    if (rule.kind === "Run") {
      policy.run[rule.effect].push({ re: runPattern(rule.pattern), result: ruleResult(rule, text, "running this command") });
      continue;
    }
    if (rule.kind === "Net") {
      policy.net[rule.effect].push({ re: hostPattern(rule.pattern), result: ruleResult(rule, text, "reaching this host") });
      continue;
    }
    const { base, glob } = ruleTarget(rule, roots);
    const baseSlash = base === "/" ? "/" : base + "/";
    let re: RegExp | null = null;
    if (glob !== null) {
      const full = (base === "/" ? "/" : escapeGlob(base) + "/") + glob;
      try {
        re = picomatch.makeRe(full, { dot: true });
      } catch (error) {
        throw new ConfigError(
          `Bad permission rule ${JSON.stringify(text)} ${fromWhere(rule.source)}: the glob does not compile (${(error as Error).message}). ${RULE_HELP}`,
          rule.source,
          text,
        );
      }
    }
    const verb = rule.kind === "Read" ? "reading this path" : "writing this path";
    const group = rule.kind === "Read" ? policy.read : policy.edit;
    group[rule.effect].push({ base, baseSlash, re, result: ruleResult(rule, text, verb) });
  }
  return policy;
}

/** Judges one request: built-in denies, then deny > ask > allow rules, then defaults. Pure and allocation-free for paths. */
export function decide(policy: Policy, request: AccessRequest): Decision {
  const access = request.access;
  if (access === "run") return decideCommand(policy.run, request.command);
  if (access === "net") return decideNet(policy, request.host);
  if (access !== "read" && access !== "write") return BAD_ACCESS;
  let real = request.real;
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
  if (!write && flags & GIT_ANYWHERE && (equalsCI(name, 0, name.length, "config") || equalsCI(name, 0, name.length, "config.worktree"))) return GIT_CONFIG_READ;
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

const NET_NO_HOST = result("deny", "The request names no host. This is a Pencil bug, not something to retry with the same input.");

/** Judges a request to `host` by the Net rules: deny > ask > allow; without a rule it asks. */
function decideNet(policy: Policy, host: string | undefined): Decision {
  if (typeof host !== "string" || host === "") return NET_NO_HOST;
  const h = host.toLowerCase();
  for (const group of [policy.net.deny, policy.net.ask, policy.net.allow]) for (const r of group) if (r.re.test(h)) return r.result;
  return result(
    "ask",
    `Reaching ${host} sends data outside this machine, so the user approves it unless a Net(...) allow rule covers the host. Allow it only if the request holds nothing private (a URL or query can carry text the agent read).`,
  );
}

/** A host glob: `*` matches any run of characters; case-insensitive. */
function hostPattern(pattern: string): RegExp {
  return new RegExp(`^${pattern.toLowerCase().split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[\\s\\S]*")}$`);
}

function ruleResult(rule: Rule, text: string, verb: string): Decision {
  const from = fromWhere(rule.source);
  if (rule.effect === "deny") {
    const what = rule.kind === "Run" ? "command" : "path";
    return result(
      "deny",
      `Denied by the rule ${text} ${from}. Do not retry this ${what}; choose another approach or ask the user to change the rule.`,
      text,
    );
  }
  if (rule.effect === "ask") return result("ask", `The rule ${text} ${from} asks the user before ${verb}.`, text);
  return result("allow", `Allowed by the rule ${text} ${from}.`, text);
}

function fromWhere(source: string): string {
  return source.startsWith("--") ? `given with ${source}` : `in ${source}`;
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

function realOf(p: string): string {
  return realPathLoose(resolve(p)).real;
}

function escapeGlob(s: string): string {
  return s.replace(/[\\*?[\]{}()!+@|,]/g, "\\$&");
}

function unescapeGlob(s: string): string {
  return s.replace(/\\(.)/g, "$1");
}
