import picomatch from "picomatch";
import type { Decision, Effect } from "./policy.ts";
import { ConfigError } from "../errors/config-error.ts";

/** An `Mcp(server/tool-glob)` rule: which MCP tools it covers and what it says about them. */
export interface McpRule {
  effect: Effect;
  /** Glob over server names (`github`, `*`). */
  server: string;
  /** Glob over the server's tool names (`get_*`, `*`). */
  tool: string;
  /** Where the rule came from (a settings file, `--allow`), for messages. */
  source: string;
}

/** A compiled rule: the matchers built once. */
interface CompiledMcpRule extends McpRule {
  matchServer: (name: string) => boolean;
  matchTool: (name: string) => boolean;
}

/** True for rule text that is an `Mcp(...)` rule, so the path/command rule parser never sees it. */
export function isMcpRuleText(text: string): boolean {
  return /^\s*Mcp\(/.test(text);
}

const NAME_GLOB = /^[A-Za-z0-9_.*?\-[\]{},!]+$/;

/** Parses `Mcp(server/tool-glob)` (`Mcp(server)` means every tool of it); throws ConfigError naming the source and the rule. */
export function parseMcpRule(text: string, effect: Effect, source: string): McpRule {
  const m = /^\s*Mcp\((.*)\)\s*$/.exec(text);
  const inner = m?.[1]?.trim() ?? "";
  const [server = "", tool = "*", ...extra] = inner.split("/");
  if (!m || !server || extra.length > 0 || !NAME_GLOB.test(server) || !NAME_GLOB.test(tool)) {
    throw new ConfigError(
      `"${text}" is not an MCP rule: write Mcp(server/tool-glob), e.g. Mcp(github/get_*) or Mcp(docs) for every tool of a server.`,
      source,
      text,
    );
  }
  return { effect, server, tool, source };
}

/** The compiled Mcp rules of a run. */
export interface McpPolicy {
  readonly rules: readonly CompiledMcpRule[];
}

/** Compiles the rules once for the run. */
export function compileMcpPolicy(rules: readonly McpRule[]): McpPolicy {
  return {
    rules: rules.map((r) => ({
      ...r,
      matchServer: picomatch(r.server, { dot: true }),
      matchTool: picomatch(r.tool, { dot: true }),
    })),
  };
}

/** Judges one MCP tool call: deny > ask > allow, and a call no rule covers asks. Pure. */
export function decideMcp(policy: McpPolicy, server: string, tool: string): Decision {
  for (const effect of ["deny", "ask", "allow"] as const) {
    const hit = policy.rules.find((r) => r.effect === effect && r.matchServer(server) && r.matchTool(tool));
    if (hit) {
      const rule = `Mcp(${hit.server}/${hit.tool})`;
      const reason =
        effect === "deny"
          ? `The rule ${rule} (${hit.source}) denies it.`
          : effect === "ask"
            ? `The rule ${rule} (${hit.source}) asks first.`
            : `Allowed by ${rule} (${hit.source}).`;
      return { decision: effect, reason, rule };
    }
  }
  return { decision: "ask", reason: `No Mcp(${server}/…) rule covers ${server}/${tool}, so the owner is asked.` };
}
