import { readFileSync, statSync } from "node:fs";
import { DiskFileOps, type FileOps } from "../../core/file-ops.ts";
import { sha256 } from "../../core/hash.ts";
import { Overlay } from "../../core/staging/overlay.ts";
import { ReadLedger } from "../../core/staging/read-ledger.ts";
import type { PencilTool, ToolContext } from "../../tools/tool.ts";
import { ToolError } from "../../core/errors/tool-error.ts";
import { DEFAULT_LIMITS, type ToolLimits } from "../../core/tool-limits.ts";
import { openWorkspace, type Workspace } from "../../core/workspace.ts";
import { tempDir, writeTree } from "./temp.ts";

/** A tool context over a real workspace directory, staging into a fresh overlay unless `fs` is given. */
export function toolContext(
  root: string,
  options: { fs?: FileOps; limits?: Partial<ToolLimits>; model?: string; home?: string } = {},
) {
  const ws: Workspace = openWorkspace(root, options.home);
  const disk = new DiskFileOps();
  const overlay = new Overlay(disk, options.limits?.maxFileBytes ?? DEFAULT_LIMITS.maxFileBytes);
  let calls = 0;
  const ctx: ToolContext = {
    ws,
    fs: options.fs ?? overlay,
    reads: new ReadLedger(),
    call: { id: "call-0", model: options.model ?? "test:model" },
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    visible: () => true,
  };
  /** Runs a tool as the session would: a fresh call id each time. */
  async function run<I>(tool: PencilTool<I>, input: I): Promise<string> {
    ctx.call = { ...ctx.call, id: `call-${++calls}` };
    return tool.execute(tool.inputSchema.parse(input), ctx);
  }
  return { ws, disk, overlay, ctx, run };
}

/** The ToolError a tool call fails with; any other outcome fails the test. */
export async function failure(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (error) {
    if (ToolError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a ToolError");
}

/** Records a disk read the way read_file does, so the write tools see a prior read. */
export function markRead(ctx: ToolContext, real: string, display: string): void {
  const st = statSync(real);
  ctx.reads.record(real, display, { size: st.size, mtimeMs: st.mtimeMs, hash: sha256(readFileSync(real)) });
}

/** A workspace of `files` in a temporary directory, its tool context, and `staged(path)`: the staged text of a workspace-relative path (null: a staged deletion; undefined: nothing staged). */
export function stagingWorkspace(files: Record<string, string>) {
  const root = tempDir();
  writeTree(root, files);
  const t = toolContext(root);
  const staged = (path: string): string | null | undefined => {
    const entry = t.overlay.list().find((e) => e.real === `${t.ws.root}/${path}`);
    if (!entry) return undefined;
    return entry.after ? new TextDecoder().decode(entry.after.bytes) : null;
  };
  return { ...t, staged };
}
