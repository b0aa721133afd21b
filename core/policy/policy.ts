// The policy: rules compiled once, then `decide`, a pure function, judges each
// request. Three rooms: rules parsed and resolved in policy-rules.ts, paths decided
// in path-decisions.ts, commands in command-policy.ts; hosts (Net rules) here.
import { decideCommand, runPattern, type RunRules } from "./command-policy.ts";
import { compilePathPolicy, decidePath, type PathPolicy } from "./path-decisions.ts";
import { ruleDecision, ruleText, verdict as result, type Decision, type Groups, type Rule } from "./policy-rules.ts";

export {
  parseRule,
  RULE_HELP,
  ruleTarget,
  ruleText,
  type Decision,
  type Effect,
  type Rule,
} from "./policy-rules.ts";
export { HOME_CREDENTIALS, isSecretFileName } from "./path-decisions.ts";

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

/** Inputs of compilePolicy: the roots every pattern is resolved against, and the merged rules. */
export interface PolicyInput {
  workspaceRoot: string;
  home: string;
  pencilHome: string;
  rules: readonly Rule[];
}

/** One compiled Net(...) rule: a host glob as a regular expression, and what it decides. */
interface HostRule {
  re: RegExp;
  result: Decision;
}

/** A compiled policy: everything `decide` needs, with no file system access left to do. */
export interface Policy extends PathPolicy {
  readonly run: RunRules;
  readonly net: Groups<HostRule>;
}

const BAD_ACCESS = result("deny", "Unknown kind of access: only read, write and run are judged. This is a Pencil bug.");

/** Compiles rules against the workspace, home and PENCIL_HOME; the only file system access (symlink resolution of rule bases) happens here. */
export function compilePolicy(input: PolicyInput): Policy {
  const run: RunRules = { deny: [], ask: [], allow: [] };
  const net: Groups<HostRule> = { deny: [], ask: [], allow: [] };
  for (const rule of input.rules) {
    const text = ruleText(rule);
    if (rule.kind === "Run")
      run[rule.effect].push({ re: runPattern(rule.pattern), result: ruleDecision(rule, text, "running this command") });
    else if (rule.kind === "Net")
      net[rule.effect].push({ re: hostPattern(rule.pattern), result: ruleDecision(rule, text, "reaching this host") });
  }
  return { ...compilePathPolicy(input), run, net };
}

/** Judges one request: built-in denies, then deny > ask > allow rules, then defaults. Pure and allocation-free for paths. */
export function decide(policy: Policy, request: AccessRequest): Decision {
  const access = request.access;
  if (access === "run") return decideCommand(policy.run, request.command);
  if (access === "net") return decideNet(policy, request.host);
  if (access !== "read" && access !== "write") return BAD_ACCESS;
  return decidePath(policy, access, request.real);
}

const NET_NO_HOST = result(
  "deny",
  "The request names no host. This is a Pencil bug, not something to retry with the same input.",
);

/** Judges a request to `host` by the Net rules: deny > ask > allow; without a rule it asks. */
function decideNet(policy: Policy, host: string | undefined): Decision {
  if (typeof host !== "string" || host === "") return NET_NO_HOST;
  const h = netName(host);
  for (const group of [policy.net.deny, policy.net.ask, policy.net.allow])
    for (const r of group) if (r.re.test(h)) return r.result;
  return result(
    "ask",
    `Reaching ${host} sends data outside this machine, so the user approves it unless a Net(...) allow rule covers the host. Allow it only if the request holds nothing private (a URL or query can carry text the agent read).`,
  );
}

/**
 * A host as rules compare it: lower case, an IPv6 address without brackets, without the trailing dot that
 * DNS ignores (`evil.net.` reaches evil.net, so a rule about one is about the other).
 */
function netName(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
}

/** A host glob: `*` matches any run of characters; case-insensitive. */
function hostPattern(pattern: string): RegExp {
  return new RegExp(
    `^${netName(pattern)
      .split("*")
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("[\\s\\S]*")}$`,
  );
}
