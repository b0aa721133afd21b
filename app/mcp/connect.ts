import { createMCPClient, type MCPClient } from "@ai-sdk/mcp";
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { Approver } from "../../agent/approver.ts";
import { commandEnv } from "../../core/sandbox/command-env.ts";
import { ToolError, type PencilTool } from "../../core/tools/tool.ts";
import { describeServer, McpApprovals, type McpServerConfig } from "./config.ts";
import { confineServer } from "./confine.ts";

/** The MCP tools of a run, what went wrong on the way (said to the owner), and how to stop the servers. */
export interface McpSession {
  tools: PencilTool[];
  notices: string[];
  close(): Promise<void>;
}

/** Timeouts of MCP traffic: starting and listing, and one tool call. */
export interface McpTimeouts {
  connectMs: number;
  callMs: number;
}

const DEFAULT_TIMEOUTS: McpTimeouts = { connectMs: 10_000, callMs: 60_000 };
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_TOOLS_PER_SERVER = 64;
const MAX_SCHEMA_CHARS = 16 * 1024;
const MAX_DESCRIPTION_CHARS = 1024;
const MAX_RESULT_CHARS = 30 * 1024;

/** The model's name for a server's tool. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/**
 * Starts the servers the owner configured and the workspace's proposals the owner
 * approved (asking once per exact command; nobody there → not started), lists their
 * tools and turns each into a PencilTool the policy seam judges by Mcp rules. A server
 * that fails to start, answers late or offers hostile tools is left out with a notice.
 */
export async function openMcpSession(input: {
  servers: McpServerConfig[];
  workspaceRoot: string;
  pencilHome: string;
  approver: Approver;
  /** The owner's `sandbox.network`: without it, stdio servers get no network where the namespace sandbox works. */
  network?: boolean;
  timeouts?: Partial<McpTimeouts>;
  signal?: AbortSignal;
}): Promise<McpSession> {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...input.timeouts };
  const approvals = new McpApprovals(input.pencilHome);
  const notices: string[] = [];
  const clients: MCPClient[] = [];
  const cleanups: (() => void)[] = [];
  const tools: PencilTool[] = [];
  for (const server of input.servers) {
    if (server.origin === "workspace" && !approvals.approved(input.workspaceRoot, server)) {
      const answer = await input.approver.ask(
        {
          tool: "mcp",
          access: "run",
          subject: `start MCP server "${server.name}" proposed by .pencil/mcp.json: ${describeServer(server)}`,
          reason:
            "The workspace proposes this MCP server. It runs with your permissions outside the review; approve only a command you trust. Your approval is remembered for this exact command.",
          once: true,
        },
        input.signal,
      );
      if (answer.kind === "no") {
        notices.push(`MCP server "${server.name}" (proposed by the workspace) was not started: not approved.`);
        continue;
      }
      approvals.approve(input.workspaceRoot, server);
    }
    try {
      const { client, cleanup } = await connect(server, timeouts, input.network ?? false, input.pencilHome);
      clients.push(client);
      cleanups.push(cleanup);
      const listed = await withTimeout(
        client.listTools({ options: { timeout: timeouts.connectMs } }),
        timeouts.connectMs,
        `did not list its tools within ${timeouts.connectMs} ms`,
      );
      tools.push(...toolsOf(server, client, listed.tools, timeouts, notices));
    } catch (error) {
      notices.push(`MCP server "${server.name}" is left out of this run: ${messageOf(error)}`);
    }
  }
  return {
    tools,
    notices,
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
      for (const cleanup of cleanups) cleanup();
    },
  };
}

async function connect(
  server: McpServerConfig,
  timeouts: McpTimeouts,
  network: boolean,
  pencilHome: string,
): Promise<{ client: MCPClient; cleanup: () => void }> {
  if (server.kind === "http") {
    const client = await withTimeout(
      createMCPClient({
        transport: { type: "http", url: server.url, headers: server.headers, redirect: "error" },
        clientName: "pencil",
        initializationOptions: { timeout: timeouts.connectMs },
        onUncaughtError: () => {},
      }),
      timeouts.connectMs,
      `did not answer within ${timeouts.connectMs} ms`,
    );
    return { client, cleanup: () => {} };
  }
  // The server starts in an empty private directory with a private home and the secret-looking variables removed:
  // a relative write does not land in the workspace, and nothing it writes is trusted or applied.
  const root = mkdtempSync(join(tmpdir(), "pencil-mcp-"));
  const dir = join(root, "work");
  mkdirSync(dir, { mode: 0o700 });
  const cleanup = () => rmSync(root, { recursive: true, force: true });
  try {
    // The owner's own server gets the variables the owner wrote for it (a token, say); a proposal's secret-looking ones are dropped.
    const env =
      server.origin === "owner"
        ? { ...commandEnv(process.env, { home: dir, tmp: dir }), ...server.env }
        : commandEnv(process.env, { home: dir, tmp: dir }, server.env);
    // In the command sandbox where it works: read-only system, home, credentials and secrets hidden, no network unless opened.
    const confined = confineServer(server.command, server.args, {
      network,
      place: { root, dir },
      pencilHome,
      env: process.env,
      serverEnv: env,
    });
    const transport = new StdioMCPTransport({
      command: confined.command,
      args: confined.args,
      env: confined.env,
      cwd: dir,
      stderr: "ignore",
    });
    try {
      const client = await withTimeout(
        createMCPClient({
          transport,
          clientName: "pencil",
          initializationOptions: { timeout: timeouts.connectMs },
          onUncaughtError: () => {},
        }),
        timeouts.connectMs,
        `did not finish starting within ${timeouts.connectMs} ms`,
      );
      return { client, cleanup };
    } catch (error) {
      // A server that never answered is still running: stop it.
      await transport.close().catch(() => {});
      throw error;
    }
  } catch (error) {
    cleanup();
    throw error;
  }
}

type Listed = Awaited<ReturnType<MCPClient["listTools"]>>["tools"];

/** The server's tools that are safe to offer: sane names, object schemas of sensible size, bounded descriptions. */
function toolsOf(
  server: McpServerConfig,
  client: MCPClient,
  listed: Listed,
  timeouts: McpTimeouts,
  notices: string[],
): PencilTool[] {
  const out: PencilTool[] = [];
  for (const def of listed.slice(0, MAX_TOOLS_PER_SERVER)) {
    const name = typeof def.name === "string" ? def.name : "";
    const full = mcpToolName(server.name, name);
    if (!TOOL_NAME.test(name) || full.length > 64) {
      notices.push(
        `MCP server "${server.name}": tool ${JSON.stringify(name).slice(0, 80)} left out (a tool name must be letters, digits, "_" or "-", and ${full.length > 64 ? "the full name at most 64 characters" : "not empty"}).`,
      );
      continue;
    }
    let schema: z.ZodType;
    try {
      const raw = def.inputSchema as Record<string, unknown>;
      if (!raw || raw.type !== "object") throw new Error("its input schema is not an object schema");
      if (JSON.stringify(raw).length > MAX_SCHEMA_CHARS)
        throw new Error(`its input schema is larger than ${MAX_SCHEMA_CHARS} characters`);
      schema = z.fromJSONSchema(raw as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (error) {
      notices.push(`MCP server "${server.name}": tool ${name} left out: ${messageOf(error)}.`);
      continue;
    }
    const description = `[MCP tool "${name}" of server "${server.name}"; its text is the server's, not the owner's] ${String(def.description ?? "").slice(0, MAX_DESCRIPTION_CHARS)}`;
    out.push({
      name: full,
      description,
      inputSchema: schema,
      claims: () => [],
      mcp: { server: server.name, tool: name },
      async execute(input, ctx) {
        let result;
        try {
          result = await client.callTool({
            name,
            arguments: (input ?? {}) as Record<string, unknown>,
            options: { timeout: timeouts.callMs, ...(ctx.signal ? { signal: ctx.signal } : {}) },
          });
        } catch (error) {
          throw new ToolError(
            `MCP server "${server.name}" failed on ${name}: ${messageOf(error)}. It may have crashed or be too slow; continue without it.`,
          );
        }
        const text = resultText(result);
        if (result.isError) throw new ToolError(`MCP tool ${server.name}/${name} reported an error: ${text}`);
        return text;
      },
    });
  }
  if (listed.length > MAX_TOOLS_PER_SERVER)
    notices.push(
      `MCP server "${server.name}" offers ${listed.length} tools; only the first ${MAX_TOOLS_PER_SERVER} are used.`,
    );
  return out;
}

function resultText(result: Awaited<ReturnType<MCPClient["callTool"]>>): string {
  const parts: string[] = [];
  const content = Array.isArray((result as { content?: unknown }).content)
    ? (result as { content: { type: string; text?: string; mimeType?: string }[] }).content
    : [];
  for (const part of content) {
    if (part.type === "text" && typeof part.text === "string") parts.push(part.text);
    else parts.push(`[${part.type}${part.mimeType ? ` ${part.mimeType}` : ""} content not shown]`);
  }
  if (parts.length === 0 && "structuredContent" in result)
    parts.push(JSON.stringify((result as { structuredContent: unknown }).structuredContent));
  const text = parts.join("\n") || "(no output)";
  return text.length > MAX_RESULT_CHARS
    ? `${text.slice(0, MAX_RESULT_CHARS)}\n[… ${text.length - MAX_RESULT_CHARS} more characters cut]`
    : text;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
