import type { z } from "zod";
import type { CommandRecord } from "../core/staging/command-record.ts";
import type { FileOps } from "../core/file-ops.ts";
import type { ReadLedger } from "../core/staging/read-ledger.ts";
import type { Workspace } from "../core/workspace.ts";
import type { ToolLimits } from "../core/tool-limits.ts";
import type { NetRequest, PathClaim } from "../core/policy/claims.ts";

/** Everything a tool call may use: injected, so the same tool runs on the disk or the overlay. */
export interface ToolContext {
  ws: Workspace;
  fs: FileOps;
  reads: ReadLedger;
  call: { id: string; model: string };
  limits: ToolLimits;
  /** Policy-backed: may the content or name of this real path be shown to the model? Walkers skip paths where it says no. */
  visible(real: string): boolean;
  /** Policy-backed: why a write to this real path would be refused, or null when it may be staged. Used by tools that discover their writes afterwards (run_command). */
  writeRefusal?(real: string): string | null;
  /** Where a command tool reports each command it ran, for the run's record (the changeset keeps them). */
  recordCommand?(record: CommandRecord): void;
  /** Judges a request a command makes through Pencil's proxy (Net rules, the owner); resolves true to let it go. Absent: every request is refused. */
  reach?(request: NetRequest): Promise<boolean>;
  signal?: AbortSignal;
}

/** A tool as Pencil defines it, independent of any model SDK; the session adapts it. */
export interface PencilTool<I = any> {
  name: string;
  description: string;
  inputSchema: z.ZodType<I>;
  /** The schema shown to the model when it is narrower than what `inputSchema` accepts (edit_file's `edits` and `insert_line`); default `inputSchema`. */
  modelSchema?: z.ZodType;
  /** True for a reading tool given a list of paths where it takes one: the seam runs it once per path (each judged) instead of refusing. */
  readsEach?: boolean;
  /** The paths this call will touch; judged by the policy before `execute` runs. */
  claims(input: I): PathClaim[];
  /** For tools that run a command: the command line, judged by the policy's Run rules before `execute`. */
  runCommand?: (input: I) => string;
  /**
   * For tools that send data off the machine: what the call would send where (`subject`, e.g. the URL or
   * the query), the destination an "always" answer covers (`destination`, e.g. the host), and the host name
   * the Net(...) rules judge (`host`, without a port; default `destination`). Without an allow rule the seam
   * asks the owner before every such call: a file the agent read could otherwise smuggle its content out.
   */
  reaches?: (input: I) => { subject: string; destination: string; host?: string };
  /** For command tools: true when a run is confined by a sandbox; false means it would run with the user's full permissions, so the seam asks every time. */
  sandboxed?: () => boolean | Promise<boolean>;
  /** For MCP tools: the server and the server's own tool name, judged by Mcp(server/tool) rules before `execute`. */
  mcp?: { server: string; tool: string };
  /** Runs the call; returns the text the model reads. Throws ToolError for failures the model should fix. */
  execute(input: I, ctx: ToolContext): Promise<string>;
  /** Releases what the tool keeps for its run (run_command's kept scratch); called once when the run ends, however it ends. */
  close?: () => Promise<void>;
}
