import { createMCPClient, type MCPClient } from "@ai-sdk/mcp";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { Approver } from "../../core/policy/approver.ts";
import { decide, type Policy } from "../../core/policy/policy.ts";
import { commandEnv, commandPath } from "../../core/sandbox/command-env.ts";
import { sandboxAvailable } from "../../core/sandbox/namespace.ts";
import type { ProxyHandle, StartProxy } from "../run-command.ts";
import type { PencilTool } from "../tool.ts";
import type { NetRequest } from "../../core/policy/claims.ts";
import { ToolError } from "../../core/errors/tool-error.ts";
import { describeServer, McpApprovals, type McpServerConfig } from "./config.ts";
import { bindingOf, confineServer, describeView, inspectServer, type ServerView } from "./confine.ts";
import { resolveCommand } from "./program.ts";
import { ServerProcessTransport } from "./stdio-transport.ts";
import { toldIfSlow } from "../../core/wait-notice.ts";

/** The MCP tools of a run, what went wrong on the way (said to the owner), and how to stop the servers. */
export interface McpSession {
  tools: PencilTool[];
  notices: string[];
  close(): Promise<void>;
}

/** Timeouts of MCP traffic: starting and listing, and one tool call. */
interface McpTimeouts {
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
function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** What openMcpSession needs. */
export interface McpSessionInput {
  servers: McpServerConfig[];
  workspaceRoot: string;
  pencilHome: string;
  approver: Approver;
  /** The owner's `sandbox.network`: with it, a sandboxed stdio server reaches the network only through Pencil's proxy, judged by Net rules; without, not at all. */
  network?: boolean;
  /** The owner's home (default os.homedir()). */
  home?: string;
  /** The run's policy: its Net rules judge a server's requests, its read denies keep path arguments private (default the built-in ones). */
  policy?: Policy;
  /** Pencil's environment (default process.env). */
  env?: Record<string, string | undefined>;
  /** Starts the proxy of a server with the network on (default net/command-proxy's; tests map host names). */
  startProxy?: StartProxy;
  timeouts?: Partial<McpTimeouts>;
  signal?: AbortSignal;
}

/**
 * Starts the servers the owner configured and the workspace's proposals the owner
 * approved (asking once per exact command, values and program; nobody there → not
 * started), lists their tools and turns each into a PencilTool the policy seam judges
 * by Mcp rules. A server that fails to start, answers late or offers hostile tools is
 * left out with a notice that says why.
 */
export async function openMcpSession(input: McpSessionInput): Promise<McpSession> {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...input.timeouts };
  const approvals = new McpApprovals(input.pencilHome);
  const notices: string[] = [];
  const clients: MCPClient[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const tools: PencilTool[] = [];
  const env = input.env ?? process.env;
  const home = input.home ?? homedir();
  const sends = new SendJudge(input);
  // Questions one at a time, in order; then the approved servers start side by side.
  const starting: { server: McpServerConfig; view: ServerView | null }[] = [];
  for (const server of input.servers) {
    const view =
      server.kind === "stdio"
        ? inspectServer(server.command, server.args, {
            workspaceRoot: input.workspaceRoot,
            home,
            pencilHome: input.pencilHome,
            env,
            ...(input.policy ? { policy: input.policy } : {}),
          })
        : null;
    const binding = view && server.origin === "workspace" ? bindingOf(view) : undefined;
    if (server.origin === "workspace" && !approvals.approved(input.workspaceRoot, server, binding)) {
      const seen = view ? describeView(view, input.workspaceRoot) : [];
      const answer = await input.approver.ask(
        {
          tool: "mcp",
          access: "run",
          subject: `start MCP server "${server.name}" proposed by .pencil/mcp.json: ${describeServer(server)}${seen.length ? ` (${seen.join(" ")})` : ""}`,
          reason:
            "The workspace proposes this MCP server. It runs with your permissions outside the review; approve only a command you trust. Your approval is remembered for this exact command, its values and its program's content.",
          once: true,
        },
        input.signal,
      );
      if (answer.kind === "no") {
        notices.push(`MCP server "${server.name}" (proposed by the workspace) was not started: not approved.`);
        continue;
      }
      approvals.approve(input.workspaceRoot, server, binding);
    }
    starting.push({ server, view });
  }
  const outcomes = await Promise.all(
    starting.map(async ({ server, view }) => {
      const own: string[] = view ? view.notices.map((n) => `MCP server "${server.name}": ${n}`) : [];
      let started: Started | null = null;
      // A server slower than a second to start is named while the run waits for it (in a terminal).
      const slow = () =>
        `Starting MCP server "${server.name}" (${server.kind === "http" ? originOf(server.url) : server.command}); it is given ${Math.round(timeouts.connectMs / 1000)} s. Ctrl-C to stop.`;
      try {
        started = await toldIfSlow(
          slow,
          server.kind === "http"
            ? connectHttp(server, timeouts)
            : connectStdio(server, view!, { ...input, env, home, network: input.network ?? false }, timeouts, sends),
        );
        const client = started.client;
        const listed = await toldIfSlow(
          slow,
          withTimeout(
            client.listTools({ options: { timeout: timeouts.connectMs } }),
            timeouts.connectMs,
            `did not list its tools within ${timeouts.connectMs} ms`,
          ),
        );
        return { started, tools: toolsOf(server, started, listed.tools, timeouts, own), notices: own };
      } catch (error) {
        own.push(`MCP server "${server.name}" is left out of this run: ${await failureOf(error, started?.transport)}`);
        return { started, tools: [], notices: own };
      }
    }),
  );
  for (const outcome of outcomes) {
    if (outcome.started) {
      clients.push(outcome.started.client);
      cleanups.push(outcome.started.cleanup);
    }
    tools.push(...outcome.tools);
    notices.push(...outcome.notices);
  }
  return {
    tools,
    notices,
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await Promise.allSettled(cleanups.map((cleanup) => cleanup()));
    },
  };
}

/** A connected server: its client, its process's transport (stdio), and what to undo when it stops. */
interface Started {
  client: MCPClient;
  transport?: ServerProcessTransport;
  cleanup: () => Promise<void>;
}

/** Why a server failed: how its process ended when it did (exit code, stderr), else the client's error. */
async function failureOf(error: unknown, transport?: ServerProcessTransport): Promise<string> {
  const stopped = (error as { stopped?: string }).stopped ?? (await transport?.stoppedWithin(500)) ?? null;
  return stopped ?? messageOf(error);
}

async function connectHttp(
  server: Extract<McpServerConfig, { kind: "http" }>,
  timeouts: McpTimeouts,
): Promise<Started> {
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
  return { client, cleanup: async () => {} };
}

async function connectStdio(
  server: Extract<McpServerConfig, { kind: "stdio" }>,
  view: ServerView,
  input: McpSessionInput & { env: Record<string, string | undefined>; home: string; network: boolean },
  timeouts: McpTimeouts,
  sends: SendJudge,
): Promise<Started> {
  const command = view.npx ? realOr(view.npx.bin) : server.command;
  const args = view.npx ? view.npx.args : server.args;
  if (!view.npx && resolveCommand(command, commandPath(input.env)) === null)
    throw new Error(
      command.includes("/")
        ? `its command ${command} does not exist or is not executable`
        : `its command ${command} was not found on PATH (${commandPath(input.env)})`,
    );
  // The server starts in an empty private directory with a private home and the secret-looking variables removed:
  // a relative write does not land in the workspace, and nothing it writes is trusted or applied.
  const root = realOr(mkdtempSync(join(tmpdir(), "pencil-mcp-")));
  const dir = join(root, "work");
  mkdirSync(dir, { mode: 0o700 });
  let proxy: ProxyHandle | null = null;
  const cleanup = async () => {
    await proxy?.close();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    // The owner's own server gets the variables the owner wrote for it (a token, say); a proposal's secret-looking ones are dropped.
    const place = { home: dir, tmp: dir };
    const env =
      server.origin === "owner"
        ? { ...commandEnv(input.env, place), ...server.env }
        : commandEnv(input.env, place, server.env);
    // npx (not found in the owner's npx cache) installs into a cache of the server's own: the owner's is read-only here.
    if (server.env.npm_config_cache === undefined) env.npm_config_cache = join(dir, ".npm");
    // With no network, npm answers from that cache at once instead of retrying a registry it cannot reach.
    if (!input.network && env.npm_config_offline === undefined) env.npm_config_offline = "true";
    let proxied: { socket: string; trust: { ca: string; bundle: string } | null } | undefined;
    if (input.network && sandboxAvailable()) {
      const socket = join(root, "proxy.sock");
      const start = input.startProxy ?? (await import("../../net/command-proxy.ts")).startCommandProxy;
      proxy = await start({ socketPath: socket, reach: (r) => sends.judge(server.name, r) });
      let trust: { ca: string; bundle: string } | null = null;
      if (proxy.caCertPem && proxy.trustBundlePem) {
        trust = { ca: join(root, "pencil-proxy-ca.pem"), bundle: join(root, "pencil-ca-bundle.pem") };
        writeFileSync(trust.ca, proxy.caCertPem);
        writeFileSync(trust.bundle, proxy.trustBundlePem);
      }
      proxied = { socket, trust };
    }
    // In the command sandbox where it works: read-only system, home, credentials and secrets hidden, no network but the proxy.
    const confined = confineServer(command, args, {
      view,
      place: { root, dir },
      pencilHome: input.pencilHome,
      realHome: input.home,
      env: input.env,
      serverEnv: env,
      ...(proxied ? { proxy: proxied } : {}),
    });
    const transport = new ServerProcessTransport({
      command: confined.command,
      args: confined.args,
      env: confined.env,
      cwd: dir,
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
      return { client, transport, cleanup };
    } catch (error) {
      // A server that never answered is still running: stop it, after saying how it ended if it did.
      const stopped = await transport.stoppedWithin(500);
      await transport.close().catch(() => {});
      const lines = transport.stderrLines();
      throw Object.assign(new Error(messageOf(error)), {
        stopped:
          stopped ??
          `${messageOf(error)}${lines.length ? `; its stderr so far:\n${lines.map((l) => `  ${l}`).join("\n")}` : ""}`,
      });
    }
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * Judges what a proxied server sends, as run_command's requests are: a Net(host) deny refuses, an allow lets a read
 * go; otherwise the owner is asked (one question at a time; "always" covers that host's reads for the session), and
 * a request that changes something (a POST, a push) is asked every time. Nobody there: no.
 */
class SendJudge {
  private readonly always = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly input: Pick<McpSessionInput, "policy" | "approver" | "signal">) {}

  judge(server: string, r: NetRequest): Promise<boolean> {
    const verdict = this.input.policy
      ? decide(this.input.policy, { tool: mcpToolName(server, "*"), access: "net", host: r.host })
      : { decision: "ask" as const, reason: `No Net(${r.host}) rule covers it.` };
    const irreversible = !["GET", "HEAD", "OPTIONS", "CONNECT"].includes(r.method.toUpperCase());
    if (verdict.decision === "deny") return Promise.resolve(false);
    if (verdict.decision === "allow" && !irreversible) return Promise.resolve(true);
    if (!irreversible && this.always.has(r.host)) return Promise.resolve(true);
    const subject = r.url ? `${r.method} ${r.url}` : `${r.method} ${r.host}:${r.port}`;
    const asked = this.queue.then(async () => {
      if (!irreversible && this.always.has(r.host)) return true;
      const answer = await this.input.approver.ask(
        {
          tool: mcpToolName(server, "*"),
          access: "send",
          subject,
          reason: irreversible
            ? `MCP server "${server}" sends a ${r.method} request to ${r.host}: it may change something outside this machine, so it is asked every time.`
            : `MCP server "${server}" makes a ${r.method} request. ${verdict.reason}`,
          ...(irreversible ? { once: true } : {}),
        },
        this.input.signal,
      );
      if (answer.kind === "always" && !irreversible) this.always.add(r.host);
      return answer.kind !== "no";
    });
    this.queue = asked.catch(() => {});
    return asked.catch(() => false);
  }
}

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    // A path that does not resolve is judged as written (the policy refuses what it cannot place).
    return p;
  }
}

type Listed = Awaited<ReturnType<MCPClient["listTools"]>>["tools"];

/** The server's tools that are safe to offer: sane names, object schemas of sensible size, bounded descriptions. */
function toolsOf(
  server: McpServerConfig,
  { client, transport }: Started,
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
          const stopped = transport?.stopped();
          throw new ToolError(
            stopped
              ? `MCP server "${server.name}" stopped during ${name}: ${stopped}. Continue without it.`
              : `MCP server "${server.name}" failed on ${name}: ${messageOf(error)}. It may have crashed or be too slow; continue without it.`,
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

/** A server URL's scheme, host and port: what names it without a path or query that may carry a token. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "an HTTP server";
  }
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
