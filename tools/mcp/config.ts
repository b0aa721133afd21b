import { ConfigError } from "../../core/errors/config-error.ts";
import { errorCause, isMissing } from "../../core/errors/fs-error-code.ts";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";

/** How to reach one MCP server: a command speaking stdio, or a streamable HTTP URL. */
export type McpServerConfig =
  | {
      name: string;
      kind: "stdio";
      command: string;
      args: string[];
      env: Record<string, string>;
      origin: "owner" | "workspace";
    }
  | { name: string; kind: "http"; url: string; headers: Record<string, string>; origin: "owner" | "workspace" };

/** Server names become part of tool names (`mcp__<server>__<tool>`): letters, digits, `_` and `-` only. */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;

const Entry = z.union([
  z.strictObject({
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    type: z.literal("stdio").optional(),
  }),
  z.strictObject({
    url: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string(), z.string()).optional(),
    type: z.enum(["http", "streamable-http"]).optional(),
  }),
]);
const Servers = z.record(z.string(), Entry);

const HELP =
  'mcpServers looks like {"docs": {"command": "npx", "args": ["-y", "some-mcp-server"], "env": {}}, "remote": {"url": "https://example.com/mcp", "headers": {}}}.';

/** Parses an `mcpServers` object; throws ConfigError naming the file and the server. */
export function parseServers(raw: unknown, file: string, origin: "owner" | "workspace"): McpServerConfig[] {
  const parsed = Servers.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(
      `mcpServers${issue?.path.length ? `.${issue.path.join(".")}` : ""}: ${issue?.message}. ${HELP}`,
      file,
    );
  }
  return Object.entries(parsed.data).map(([name, entry]) => {
    if (!SERVER_NAME.test(name))
      throw new ConfigError(
        `The MCP server name "${name}" must be 1–32 letters, digits, "_" or "-" (it becomes part of tool names).`,
        file,
      );
    return "command" in entry
      ? { name, kind: "stdio" as const, command: entry.command, args: entry.args ?? [], env: entry.env ?? {}, origin }
      : { name, kind: "http" as const, url: entry.url, headers: entry.headers ?? {}, origin };
  });
}

/** A workspace's `.pencil/mcp.json` proposals; a malformed file is a warning, never a stop (the repository's words, not the owner's). */
export function readProposals(workspaceRoot: string): { servers: McpServerConfig[]; warning?: string } {
  const file = join(workspaceRoot, ".pencil", "mcp.json");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    // No file: no proposals. One that is there but unreadable is said, like a malformed one.
    if (isMissing(error)) return { servers: [] };
    return { servers: [], warning: `Ignored ${file}: it cannot be read (${errorCause(error)}).` };
  }
  try {
    const data = JSON.parse(text) as { mcpServers?: unknown };
    return { servers: parseServers(data?.mcpServers ?? {}, file, "workspace") };
  } catch (error) {
    return { servers: [], warning: `Ignored ${file}: ${(error as Error).message}` };
  }
}

/**
 * What an approval is bound to besides the configuration, found on the disk: the SHA-256 of each program file
 * (the command's, and each absolute file argument's; null when unreadable) and where each path argument really leads.
 */
export interface ServerBinding {
  programs: readonly { path: string; sha256: string | null }[];
  paths: readonly { written: string; real: string }[];
}

/** What an approval binds to: the exact command (or URL), its arguments, environment and header values, and the binding, hashed. */
function fingerprint(server: McpServerConfig, binding: ServerBinding = { programs: [], paths: [] }): string {
  const what =
    server.kind === "stdio"
      ? {
          command: server.command,
          args: server.args,
          env: sorted(server.env),
          programs: binding.programs.map((p) => [p.path, p.sha256]),
          paths: binding.paths.map((p) => [p.written, p.real]),
        }
      : { url: server.url, headers: sorted(server.headers) };
  return createHash("sha256").update(JSON.stringify(what)).digest("hex");
}

function sorted(record: Record<string, string>): [string, string][] {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A word as a shell would need it written: bare when plain, else JSON-quoted (so a space or `$(…)` shows). */
function shellWord(word: string): string {
  return /^[\w./:@=,+-]+$/.test(word) ? word : JSON.stringify(word);
}

/** The command line of a server as the owner is shown it: every environment value and header value in full. */
export function describeServer(server: McpServerConfig): string {
  if (server.kind === "http") {
    const headers = sorted(server.headers).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
    return headers.length > 0 ? `${server.url} with headers ${headers.join(", ")}` : server.url;
  }
  const env = sorted(server.env).map(([k, v]) => `${k}=${shellWord(v)}`);
  return [...env, shellWord(server.command), ...server.args.map(shellWord)].join(" ");
}

/** The owner's approvals of workspace-proposed servers, under $PENCIL_HOME: workspace → server name → fingerprint. */
export class McpApprovals {
  private readonly file: string;

  constructor(pencilHome: string) {
    this.file = join(pencilHome, "mcp-approvals.json");
  }

  private read(): Record<string, Record<string, string>> {
    try {
      const data = JSON.parse(readFileSync(this.file, "utf8"));
      return data && typeof data === "object" ? data : {};
    } catch {
      // Unreadable or damaged: no server counts as approved, so each is asked about again (when in doubt, no).
      return {};
    }
  }

  /** True when the owner approved exactly this server (same name, command, values and program content) for this workspace. */
  approved(workspaceRoot: string, server: McpServerConfig, binding?: ServerBinding): boolean {
    const byName = this.read()[workspaceRoot];
    return (
      byName !== undefined && Object.hasOwn(byName, server.name) && byName[server.name] === fingerprint(server, binding)
    );
  }

  /** Remembers an approval; a changed command, value or program later does not match it and is asked again. */
  approve(workspaceRoot: string, server: McpServerConfig, binding?: ServerBinding): void {
    const all = this.read();
    all[workspaceRoot] = { ...(all[workspaceRoot] ?? {}), [server.name]: fingerprint(server, binding) };
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(all, null, 2), { mode: 0o600 });
    renameSync(tmp, this.file);
  }
}
