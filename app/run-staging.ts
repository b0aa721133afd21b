import { readFileSync, statSync } from "node:fs";
import type { SessionEvent } from "../agent/events.ts";
import { DiskFileOps } from "../core/file-ops.ts";
import { sha256 } from "../core/hash.ts";
import { decide } from "../core/policy/policy.ts";
import type { Changeset } from "../core/staging/changeset.ts";
import type { CommandRecord } from "../core/staging/command-record.ts";
import { Overlay, type StagedEntry } from "../core/staging/overlay.ts";
import { ReadLedger } from "../core/staging/read-ledger.ts";
import { displayPath, resolveInWorkspace } from "../core/workspace.ts";
import { flagAfterInstructions, ReadFindings } from "./read-findings.ts";
import type { Runtime } from "./runtime.ts";

/** An MCP call as the changeset records it: the tool, what it was about, the decision and who made it. */
export interface McpCallRecord {
  tool: string;
  subject: string;
  decision: string;
  by: string;
}

/**
 * What one run staged and saw, across its turns: the overlay it writes into, what it read, the commands
 * and MCP calls it asked for, and any text addressed to an AI in what it read. It writes nothing to disk;
 * a changeset is made from it (`stamp`), and a reviewed file leaves it (`forget`).
 */
export class RunStaging {
  readonly overlay = new Overlay(new DiskFileOps());
  readonly reads = new ReadLedger();
  /** Every command the run asked to run, in order (saved with each changeset). */
  readonly commands: CommandRecord[] = [];
  /** MCP calls judged in this run, for the changeset's record. */
  readonly mcpCalls: McpCallRecord[] = [];
  /** Instructions addressed to an AI, or hidden text, in what this run read. */
  private readonly findings = new ReadFindings();

  constructor(private readonly runtime: Runtime) {}

  /** Takes note of a run event: what the agent reads is looked at for orders addressed to it; MCP calls are recorded as judged. */
  observe(event: SessionEvent): void {
    if (event.type === "tool-call") this.findings.call(event.callId, event.input);
    if (event.type === "tool-result") this.findings.result(event.callId, event.tool, event.ok, event.output);
    if (event.type === "policy" && event.tool.startsWith("mcp__"))
      this.mcpCalls.push({
        tool: event.tool,
        subject: event.path,
        decision: event.decision,
        by: event.answeredBy ?? "rule",
      });
  }

  /** A document the owner attached, scanned like what the agent reads. */
  document(name: string, text: string): void {
    this.findings.document(name, text);
  }

  /** A new changeset's work starts: only its own commands and MCP calls go with it. */
  startOwnRecord(): void {
    this.commands.length = 0;
    this.mcpCalls.length = 0;
  }

  /** Writes on a changeset made from `staged` what the run did besides staging: flags, commands, MCP calls. */
  stamp(changeset: Changeset, staged: StagedEntry[]): void {
    flagAfterInstructions(changeset, staged, this.findings.sources);
    if (this.commands.length > 0) changeset.commands = [...this.commands];
    if (this.mcpCalls.length > 0) changeset.mcpCalls = [...this.mcpCalls];
  }

  /** Staged files whose disk content changed since they were staged (the owner's edits, another front end's apply). */
  changedOnDisk(): string[] {
    const out: string[] = [];
    for (const entry of this.overlay.list()) {
      const disk = readDiskOrNull(entry.real);
      const now = disk ? sha256(disk) : null;
      if (now !== (entry.base.exists ? entry.base.hash : null)) out.push(displayPath(this.runtime.ws, entry.real));
    }
    return out;
  }

  /**
   * Stages a file the owner asked for outside the tool loop (ask's "save this answer"), judged by the same policy.
   * Throws, staging nothing, when the path is denied or is a directory.
   */
  stageUserFile(path: string, text: string, model: () => string): void {
    const resolved = resolveInWorkspace(this.runtime.ws, path);
    const verdict = decide(this.runtime.policy, { tool: "save_answer", access: "write", real: resolved.real });
    // The owner typed this path, which answers an "ask"; a deny stays a deny, and the write still goes through review.
    if (verdict.decision === "deny") throw new Error(`Cannot save to ${path}: ${verdict.reason}`);
    const existing = this.overlay.stat(resolved.real);
    if (existing && existing.kind !== "file") throw new Error(`${path} is a directory; give a file path.`);
    this.overlay.writeBytes(resolved.real, new TextEncoder().encode(text), {
      origin: { tool: "save_answer", callId: "user", model: model(), readsBefore: this.reads.readsSoFar() },
    });
  }

  /** A reviewed file leaves the overlay; an applied one counts as read in its new state (the agent wrote it, so it may edit it again). */
  forget(file: { real: string; path: string }, applied: boolean): void {
    this.overlay.discard(file.real);
    if (!applied) return;
    const st = statOrNull(file.real);
    if (st)
      this.reads.record(file.real, displayPath(this.runtime.ws, file.real), {
        size: st.size,
        mtimeMs: st.mtimeMs,
        hash: sha256(readFileSync(file.real)),
      });
  }
}

/** A file's bytes on disk, or null when it is missing or unreadable. */
export function readDiskOrNull(real: string): Uint8Array | null {
  try {
    return readFileSync(real);
  } catch {
    // Missing or unreadable: the changeset then has no "before" for it, and apply's own check reports the conflict.
    return null;
  }
}

function statOrNull(real: string) {
  try {
    return statSync(real);
  } catch {
    // Gone or unreadable since it was applied: it is not counted as read, so the agent reads it again before editing.
    return null;
  }
}
