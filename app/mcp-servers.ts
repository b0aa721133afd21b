import type { Approver } from "../core/policy/approver.ts";
import type { Runtime } from "./runtime.ts";
import { readProposals } from "../tools/mcp/config.ts";
import type { McpSession } from "../tools/mcp/connect.ts";

const NONE: McpSession = { tools: [], notices: [], close: async () => {} };

/**
 * The MCP servers of one run: the owner's, then the workspace's proposals (each
 * started only once approved). The MCP client is loaded only when there is a server.
 */
export async function openRunMcp(runtime: Runtime, approver: Approver, signal?: AbortSignal): Promise<McpSession> {
  const proposals = readProposals(runtime.ws.root);
  const owned = new Set(runtime.mcpServers.map((s) => s.name));
  // A proposal never replaces the owner's server of the same name.
  const servers = [...runtime.mcpServers, ...proposals.servers.filter((s) => !owned.has(s.name))];
  if (servers.length === 0) return proposals.warning ? { ...NONE, notices: [proposals.warning] } : NONE;
  const { openMcpSession } = await import("../tools/mcp/connect.ts");
  const session = await openMcpSession({
    servers,
    workspaceRoot: runtime.ws.root,
    pencilHome: runtime.pencilHome,
    approver,
    network: runtime.settings.sandbox.network,
    home: runtime.ws.home,
    policy: runtime.policy,
    ...(signal ? { signal } : {}),
  });
  if (proposals.warning) session.notices.unshift(proposals.warning);
  return session;
}
