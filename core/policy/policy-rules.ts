// Permission rules as data: parsed from settings text, resolved against the
// workspace and home, and the verdict each one gives. No decisions here: paths are
// decided in path-decisions.ts, commands in command-policy.ts, hosts in policy.ts.
import { closest } from "../did-you-mean.ts";
import picomatch from "picomatch";
import { isAbsolute, join, posix } from "node:path";
import { realPathLoose } from "../workspace.ts";
import { ConfigError } from "../errors/config-error.ts";

/** Which tools a rule covers: Read → read_file/list_files/search, Edit → every write tool, Run → run_command, Net → requests that leave the machine (fetch_url, web_search), by host. */
type RuleKind = "Read" | "Edit" | "Run" | "Net";

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

/** What a valid rule looks like: appended to every rule error. */
export const RULE_HELP =
  "A rule is Read(glob), Edit(glob), Run(command prefix*), Net(host) or Mcp(server/tool-glob), e.g. Edit(src/generated/**), Read(../shared-lib/**), Read(~/notes/**), Run(bun test*), Net(*.npmjs.org) or Mcp(github/get_*).";

const RULE_SHAPE = /^([A-Za-z_]+)\(([\s\S]*)\)$/;
const KINDS: readonly RuleKind[] = ["Read", "Edit", "Run", "Net"];
const KIND_HINTS: Record<string, RuleKind> = {
  write: "Edit",
  bash: "Run",
  shell: "Run",
  exec: "Run",
  command: "Run",
  network: "Net",
  host: "Net",
  fetch: "Net",
  web: "Net",
};
/** A Net(...) pattern: a host name or address, `*` for any run of characters (`*.example.com`). */
const HOST_PATTERN = /^[A-Za-z0-9*.\-:[\]]+$/;

/** Parses `Kind(pattern)` into a Rule; throws ConfigError (naming `source` and the rule) when it is malformed. */
export function parseRule(text: string, effect: Effect, source: string): Rule {
  const fail = (why: string): never => {
    throw new ConfigError(
      `Bad permission rule ${JSON.stringify(text)} ${ruleOrigin(source)}: ${why}. ${RULE_HELP}`,
      source,
      text,
    );
  };
  if (typeof text !== "string") fail("a rule must be a string");
  if (text.includes("\0")) fail("it contains a NUL byte");
  const m = RULE_SHAPE.exec(text.trim());
  if (!m) fail("it is not of the form Kind(pattern) with the pattern in parentheses");
  const [, kindText, inner] = m!;
  const kind = KINDS.find((k) => k === kindText);
  if (!kind) {
    const hint = KIND_HINTS[kindText!.toLowerCase()] ?? closest(kindText!, [...KINDS, "Mcp"]);
    fail(`unknown kind "${kindText}"${hint ? ` (did you mean ${hint}?)` : ""}`);
  }
  const pattern = inner!.trim();
  if (pattern === "") fail("the pattern between the parentheses is empty");
  if (kind === "Net" && !HOST_PATTERN.test(pattern))
    fail(
      "a Net rule names a host (letters, digits, . - : and * only), e.g. Net(registry.npmjs.org) or Net(*.github.com)",
    );
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
      `Permission rule ${ruleText(rule)} ${ruleOrigin(rule.source)} cannot be resolved: ${(error as Error).message}`,
      rule.source,
      ruleText(rule),
    );
  }
  return { base, glob: scan.isGlob ? scan.glob : null };
}

/** The verdict on one request; `reason` is written for the model, `rule` names the settings rule that decided (none for built-ins and defaults). */
export interface Decision {
  decision: Effect;
  reason: string;
  rule?: string;
  /** For a command: the irreversible action it performs (`git push`, `npm publish`…); such an ask is never remembered and refused with nobody to ask. */
  irreversible?: string;
}

/** A policy's rules of one kind, grouped by effect (deny is checked first, then ask, then allow). */
export interface Groups<T> {
  deny: T[];
  ask: T[];
  allow: T[];
}

/** A frozen verdict; `rule` names the settings rule that decided, when one did. */
export const verdict = (decision: Effect, reason: string, rule?: string): Decision =>
  Object.freeze(rule === undefined ? { decision, reason } : { decision, reason, rule });

/** The verdict a rule gives when it matches; `verb` says what it covers (e.g. "reading this path"). */
export function ruleDecision(rule: Rule, text: string, verb: string): Decision {
  const from = ruleOrigin(rule.source);
  if (rule.effect === "deny") {
    const what = rule.kind === "Run" ? "command" : "path";
    return verdict(
      "deny",
      `Denied by the rule ${text} ${from}. Do not retry this ${what}; choose another approach or ask the user to change the rule.`,
      text,
    );
  }
  if (rule.effect === "ask") return verdict("ask", `The rule ${text} ${from} asks the user before ${verb}.`, text);
  return verdict("allow", `Allowed by the rule ${text} ${from}.`, text);
}

/** Where a rule came from, as a phrase: `in <file>` or `given with --allow`. */
export function ruleOrigin(source: string): string {
  return source.startsWith("--") ? `given with ${source}` : `in ${source}`;
}

/** A path made literal for a glob (its glob characters escaped). */
export function escapeGlob(s: string): string {
  return s.replace(/[\\*?[\]{}()!+@|,]/g, "\\$&");
}

function unescapeGlob(s: string): string {
  return s.replace(/\\(.)/g, "$1");
}
