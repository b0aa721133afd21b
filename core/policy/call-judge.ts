// The judging half of the policy seam: what one tool call needs permission for, with the rules' verdicts.
// Pure over the policy and the file system's view of paths; it asks nobody and runs nothing. The seam
// (agent/policy-seam.ts) settles these gates in order: it asks the owner, then executes.
import { displayPath, resolveInWorkspace, type Workspace } from "../workspace.ts";
import type { NetRequest, PathClaim } from "./claims.ts";
import { type LinkGuard, stricter } from "./hard-links.ts";
import { decideMcp, type McpPolicy } from "./mcp-rules.ts";
import { decide, type Decision, type Policy } from "./policy.ts";
import { loadShellParser } from "./shell-parse.ts";
import { PathError } from "../errors/path-error.ts";
import { ShellParserNotLoaded } from "../errors/shell-parser-not-loaded.ts";

/** How the question about a command that would run without a sandbox begins. */
const NO_SANDBOX =
  "NO SANDBOX: this command would run with your full permissions (it can read and write anything you can, including secrets). ";

/**
 * Methods that only read: the others change something outside this machine. The proxy opens HTTPS tunnels and judges
 * the requests inside them, so a bare CONNECT never comes here; were one to, it would be asked every time.
 */
const READING_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/** What one tool call needs permission for, as the tool declares it before it runs. */
export interface CallNeeds {
  /** The tool's name, as the rules name it. */
  tool: string;
  /** An MCP server's tool, with the arguments the owner would be shown. */
  mcp?: { server: string; tool: string; input: unknown };
  /** The command line it would run, and whether it would run without a sandbox. */
  command?: { line: string; unsandboxed: boolean };
  /** Data it would send off this machine. */
  sending?: { subject: string; destination: string; host?: string };
  /** The paths it reads or stages, as the model gave them. */
  paths: readonly PathClaim[];
}

/** What judging needs: the workspace, the compiled rules, and the guard that judges a file by all its hard links. */
export interface JudgeDeps {
  ws: Workspace;
  policy: Policy;
  links?: LinkGuard;
  mcpPolicy?: McpPolicy;
}

/** One permission a call needs, judged by the rules, in the order the seam settles them; `key` is what an "always" covers. */
export type Gate =
  | { kind: "refuse"; message: string }
  | { kind: "mcp"; label: string; subject: string; verdict: Decision; key: string }
  | {
      kind: "command";
      command: string;
      decision: Decision["decision"];
      reason: string;
      ruleReason: string;
      key: string | null;
      once: boolean;
    }
  | { kind: "send"; subject: string; destination: string; decision: Decision["decision"]; reason: string; key: string }
  | {
      kind: "path";
      path: string;
      real: string;
      shown: string;
      access: "read" | "write";
      verdict: Decision;
      key: string;
    };

/**
 * Every permission the call needs, with the rules' verdicts, in the order they are settled (an MCP tool, the
 * command, sending, then each path). A path that cannot be resolved ends the list with a refusal gate; any
 * other failure is thrown.
 */
export async function judgeNeeds(needs: CallNeeds, deps: JudgeDeps): Promise<Gate[]> {
  const gates: Gate[] = [];
  if (needs.mcp) gates.push(judgeMcpCall(needs.mcp, deps));
  if (needs.command) gates.push(await judgeCommand(needs.tool, needs.command, deps.policy));
  if (needs.sending) gates.push(judgeSending(needs.tool, needs.sending, deps.policy));
  for (const claim of needs.paths) {
    let real: string;
    try {
      real = resolveInWorkspace(deps.ws, claim.path).real;
    } catch (error) {
      if (!PathError.isInstance(error)) throw error;
      gates.push({ kind: "refuse", message: error.message });
      break;
    }
    gates.push({
      kind: "path",
      path: claim.path,
      real,
      shown: displayPath(deps.ws, real),
      access: claim.access,
      verdict: judgePath(deps, needs.tool, claim.access, real),
      key: `${claim.access}:${real}`,
    });
  }
  return gates;
}

/** The policy's verdict on a path, made stricter by the file's other names when it has several hard links. */
export function judgePath(deps: JudgeDeps, tool: string, access: "read" | "write", real: string): Decision {
  const verdict = decide(deps.policy, { tool, access, real });
  if (verdict.decision === "deny" || !deps.links) return verdict;
  // run_command's copy keeps files whose other names are unknown (pnpm's store links): only search and list_files must never read through them.
  const unprovenRead = tool === "run_command" ? "allow" : "ask";
  return stricter(
    verdict,
    deps.links.judge(real, access, (other) => decide(deps.policy, { tool, access, real: other }), { unprovenRead }),
  );
}

/** decide() for a command line; tree-sitter's grammar is loaded only when a line needs it (plain lines never do). */
async function judgeRun(policy: Policy, tool: string, command: string): Promise<Decision> {
  try {
    return decide(policy, { tool, access: "run", command });
  } catch (error) {
    if (!ShellParserNotLoaded.isInstance(error)) throw error;
    await loadShellParser();
    return decide(policy, { tool, access: "run", command });
  }
}

/** A command line by the Run rules: a command with no sandbox, or an irreversible one, is never allowed unasked nor remembered. */
async function judgeCommand(
  tool: string,
  command: { line: string; unsandboxed: boolean },
  policy: Policy,
): Promise<Gate> {
  const verdict = await judgeRun(policy, tool, command.line);
  // Without a sandbox the command can read and write anything the user can: no allow rule and no earlier "always" lets it run unasked.
  const decision = verdict.decision === "allow" && command.unsandboxed ? "ask" : verdict.decision;
  const reason = command.unsandboxed && decision === "ask" ? NO_SANDBOX + verdict.reason : verdict.reason;
  // An irreversible action (git push, npm publish…) is asked every time: never remembered.
  const once = command.unsandboxed || Boolean(verdict.irreversible);
  return {
    kind: "command",
    command: command.line,
    decision,
    reason,
    ruleReason: verdict.reason,
    key: once ? null : `run:${command.line}`,
    once,
  };
}

/** An MCP tool call by the Mcp rules (deny > ask > allow, default ask). */
function judgeMcpCall(mcp: { server: string; tool: string; input: unknown }, deps: JudgeDeps): Gate {
  const verdict = decideMcp(deps.mcpPolicy ?? { rules: [] }, mcp.server, mcp.tool);
  const label = `${mcp.server}/${mcp.tool}`;
  return {
    kind: "mcp",
    label,
    subject: `${label} ${JSON.stringify(mcp.input ?? {}).slice(0, 500)}`,
    verdict,
    key: `mcp:${label}`,
  };
}

/**
 * Data leaving the machine: a Net(host) deny refuses and an allow lets it go; otherwise the owner answers
 * per call (or "always" for that destination in this run).
 */
function judgeSending(
  tool: string,
  target: { subject: string; destination: string; host?: string },
  policy: Policy,
): Gate {
  const verdict = decide(policy, { tool, access: "net", host: target.host ?? target.destination });
  const reason =
    verdict.decision !== "ask" || verdict.rule
      ? verdict.reason
      : `This sends data to ${target.destination}, outside this machine. Allow it only if the request holds nothing private (a URL or query can carry text the agent read).`;
  return {
    kind: "send",
    subject: target.subject,
    destination: target.destination,
    decision: verdict.decision,
    reason,
    key: `send:${target.destination}`,
  };
}

/** The rules' answer to one request a sandboxed command makes through the proxy, before anyone is asked. */
export interface RequestVerdict {
  /** `allow` lets it go unasked; `deny` refuses it; `ask` goes to the owner. */
  decision: Decision["decision"];
  /** What the owner (or the event log) reads. */
  reason: string;
  /** What an "always" covers; null when the request must be asked every time. */
  key: string | null;
  /** The request as shown: method and URL, or method, host and port. */
  subject: string;
  /** True when the method changes something outside this machine (never remembered, never allowed unasked). */
  irreversible: boolean;
}

/**
 * A request a sandboxed command makes through Pencil's proxy: a Net(host) deny refuses it; any method that is
 * not a read asks every time (never remembered, whatever the rules); otherwise an allow lets it go and the rest
 * asks as fetch_url does.
 */
export function judgeRequest(policy: Policy, tool: string, r: NetRequest): RequestVerdict {
  const verdict = decide(policy, { tool, access: "net", host: r.host });
  const irreversible = !READING_METHODS.has(r.method.toUpperCase());
  const subject = r.url ? `${r.method} ${r.url}` : `${r.method} ${r.host}:${r.port}`;
  if (verdict.decision === "deny" || (verdict.decision === "allow" && !irreversible))
    return { decision: verdict.decision, reason: verdict.reason, key: null, subject, irreversible };
  const by = r.command ? ` made by \`${r.command}\`` : "";
  const reason = irreversible
    ? `A ${r.method} request${by} to ${r.host} changes something outside this machine (a push, a publish, an upload) and cannot be taken back: it is asked every time, whatever the rules say.`
    : `${verdict.reason} This is a ${r.method} request${by}.`;
  return { decision: "ask", reason, key: irreversible ? null : `send:${r.host}`, subject, irreversible };
}
