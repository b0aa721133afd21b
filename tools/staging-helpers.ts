import type { ChangeOrigin, FileStat } from "../core/file-ops.ts";
import { sha256 } from "../core/hash.ts";
import { missingPathMessage } from "./path-near-miss.ts";
import { decodeText, type DecodedText } from "../core/text.ts";
import { displayPath, resolveInWorkspace, type ResolvedPath } from "../core/workspace.ts";
import type { ToolContext } from "./tool.ts";
import { ToolError } from "../core/errors/tool-error.ts";

/** The start of the id of a call the model wrote as text and the harness ran. */
export const TEXT_CALL_PREFIX = "text_call_";

/** The origin recorded with a staged change: this call, its model, and the reads before it. */
export function originOf(ctx: ToolContext, tool: string, notes: string[] = []): ChangeOrigin {
  // A call the model wrote as text (agent/turn-end.ts runs it under such an id) is recorded as one.
  const repairs = ctx.call.id.startsWith(TEXT_CALL_PREFIX)
    ? [`the model wrote this ${tool} call as text; it was run as a tool call`, ...notes]
    : notes;
  return {
    tool,
    callId: ctx.call.id,
    model: ctx.call.model,
    readsBefore: ctx.reads.readsSoFar(),
    ...(repairs.length > 0 ? { repairs } : {}),
  };
}

/** Resolves the model's path and shows it the way the model should name it. */
export function target(ctx: ToolContext, path: string): { resolved: ResolvedPath; display: string } {
  const resolved = resolveInWorkspace(ctx.ws, path);
  return { resolved, display: displayPath(ctx.ws, resolved.real) };
}

/** True when the file ops are an overlay that has its own staged version of `real`. */
function isStagedHere(ctx: ToolContext, real: string): boolean {
  const fs = ctx.fs as { isStaged?: (real: string) => boolean };
  return typeof fs.isStaged === "function" && fs.isStaged(real);
}

/**
 * Read-before-edit: an existing file may only be changed after this session read
 * it, and only while the disk still holds what was read (size, mtime, then hash,
 * so a same-size, same-mtime replacement is caught too). Content this run staged
 * itself is known to the model and needs no fresh read.
 */
function assertFreshRead(ctx: ToolContext, real: string, display: string, st: FileStat): void {
  if (isStagedHere(ctx, real)) return;
  const snap = ctx.reads.get(real);
  if (snap === undefined) {
    throw new ToolError(
      `${display} exists and has not been read in this session. Call read_file on it first, then retry.`,
    );
  }
  if (snap === "staged") {
    // Read while staged, but the staged version has since been dropped: the disk is what counts now.
    throw new ToolError(
      `${display} changed since you read it (its staged version was discarded). Call read_file again, then retry.`,
    );
  }
  const changed = st.size !== snap.size || st.mtimeMs !== snap.mtimeMs || sha256(ctx.fs.readBytes(real)) !== snap.hash;
  if (changed) {
    throw new ToolError(
      `${display} changed on disk since you read it (someone else edited it). Call read_file again and base the change on the new content.`,
    );
  }
}

/** The file's text for an edit, or a ToolError when it is missing, a directory, too large or binary. */
export function loadTextForChange(
  ctx: ToolContext,
  real: string,
  display: string,
): { st: FileStat; decoded: DecodedText } {
  const st = ctx.fs.stat(real);
  if (!st)
    throw new ToolError(
      missingPathMessage(ctx, real, display, "Use create_file to make it, or list_files to find the right path."),
    );
  if (st.kind !== "file")
    throw new ToolError(`${display} is a directory, not a file. Use list_files to see what is in it.`);
  if (st.size > ctx.limits.maxFileBytes) {
    throw new ToolError(
      `${display} is ${st.size} bytes, over the ${ctx.limits.maxFileBytes}-byte limit per file; it cannot be edited by the agent.`,
    );
  }
  assertFreshRead(ctx, real, display, st);
  const decoded = decodeText(ctx.fs.readBytes(real));
  if (!decoded)
    throw new ToolError(
      `${display} is a binary file (${st.size} bytes); write tools do not change binary files. Leave it, or delete_file it and explain why.`,
    );
  return { st, decoded };
}

/** Refuses content over the per-file cap before anything is staged. */
export function assertWithinCap(ctx: ToolContext, display: string, bytes: Uint8Array): void {
  if (bytes.length > ctx.limits.maxFileBytes) {
    throw new ToolError(
      `The new content of ${display} is ${bytes.length} bytes, over the ${ctx.limits.maxFileBytes}-byte limit per file. Split it into smaller files.`,
    );
  }
}
