import { randomBytes } from "node:crypto";
import type { CommandRecord } from "./command-record.ts";
import type { ChangeOrigin } from "../file-ops.ts";
import { type ChangeFlag, flagsFor } from "./flags.ts";
import { includedConfigFiles } from "../git/config-includes.ts";
import { sha256 } from "../hash.ts";
import { lineDelta, splitLines } from "./line-diff.ts";
import type { BaseState, StagedEntry } from "./overlay.ts";
import { decodeText, revealBytes } from "../text.ts";
import { displayPath, isInside, type Workspace } from "../workspace.ts";

/** The content a change leaves behind; null in FileChange.after means the file is deleted. */
export interface AfterState {
  bytes: Uint8Array;
  hash: string;
  mode: number;
}

/** One file's pending change: base, result, provenance and the model that wrote it. */
export interface FileChange {
  /** Workspace-relative path with `/` separators (absolute when outside the workspace). */
  path: string;
  /** Real absolute path the change is applied to. */
  real: string;
  kind: "create" | "modify" | "delete";
  base: BaseState;
  after: AfterState | null;
  /** The disk content the change was built on, kept for diffs; absent when there was none or it is not known. */
  before?: Uint8Array;
  /** The tool calls that staged it, in order, each with the reads before it. */
  origins: ChangeOrigin[];
  /** Models that produced it, in order of first contribution. */
  models: string[];
  flags: ChangeFlag[];
  /** Lines added and removed (0 and 0 for binary content). */
  added: number;
  removed: number;
  binary: boolean;
  /** SHA-256 over path, base hash, after hash and mode: what an approval binds to. */
  digest: string;
}

/** Lifecycle of a changeset. */
type ChangesetStatus = "pending" | "applied" | "partial" | "rejected" | "undone" | "discarded";

/** The pending actions of one run, grouped per file. */
export interface Changeset {
  id: string;
  /** Real path of the workspace root. */
  workspace: string;
  goal: string;
  createdAt: string;
  models: string[];
  files: FileChange[];
  /** SHA-256 over the file digests in path order. */
  digest: string;
  status: ChangesetStatus;
  /** The owner's decision per file path, as far as the review got. */
  decisions?: Record<string, "approved" | "rejected">;
  /** Paths written to disk so far, over every apply of this changeset. */
  applied?: string[];
  /** Journal ids of the applies of this changeset (for undo and log). */
  applyIds?: string[];
  /** Approved files that were not applied because the disk changed since staging. */
  conflicts?: string[];
  /** The id of the changeset this one revises after a rejection with reasons. */
  revises?: string;
  /** What the run was: agent, plan or ask. */
  mode?: string;
  /** Every command the run asked to run, in order: ran (with what it staged) or refused. */
  commands?: CommandRecord[];
  /** Git commits made of this changeset's applied files (`--commit`); undo leaves them in history. */
  commits?: { sha: string; branch: string; files: string[] }[];
  /** MCP tool calls judged during the run (tool, what it was called with, the verdict and who gave it): they act outside the overlay. */
  mcpCalls?: { tool: string; subject: string; decision: string; by: string }[];
  /** Paths whose staged content the owner replaced in their editor before deciding. */
  editedByOwner?: string[];
  /** The session (conversation and checkpoints) this changeset belongs to. */
  session?: string;
  /** Made by `pencil demo` on a temporary copy of examples/demo (gone once the demo ended, unless kept). */
  demo?: boolean;
  /** The session's first goal, when this changeset is a later turn's (its `goal` is that turn's own words). */
  sessionGoal?: string;
  /** Text addressed to an AI, or hidden text, in what the agent read before staging (flag `after-instructions`). */
  instructions?: {
    source: string;
    tool: string;
    kind: "hidden" | "addressed";
    line: number;
    quote: string;
    within?: string;
    at: number;
  }[];
  /** The chat model's opinion of whether the diff does what the goal asked (`intent`); it tells, it never decides. */
  intent?: IntentOpinion;
}

/**
 * The chat model's opinion of a changeset against its goal: `matches`, `more` (the diff does
 * more than asked) or `less` (less than asked), or `unchecked` when there is no opinion (the
 * call failed, timed out or answered junk). Recorded with the changeset, so every view shows
 * the same words without asking again.
 */
export interface IntentOpinion {
  verdict: "matches" | "more" | "less" | "unchecked";
  /** For `more` and `less`, what more or less, in the model's words; for `unchecked`, why there is no opinion. */
  detail: string;
  /** The label of the model asked (`groq:…`, `scripted:demo`). */
  model: string;
  /** The changeset digest and the goal it was asked about: the same pair is never asked about twice. */
  digest: string;
  goal: string;
}

/** Inputs for building a changeset from what a run staged. */
export interface BuildChangesetInput {
  id: string;
  goal: string;
  workspace: Workspace;
  staged: StagedEntry[];
  /** Reads the disk content a change was built on (the real disk, never the overlay). */
  readDisk: (real: string) => Uint8Array | null;
  createdAt?: Date;
}

/** Groups staged entries into a reviewable changeset with kinds, line counts, flags and digests. */
export function buildChangeset(input: BuildChangesetInput): Changeset {
  const included = includedConfigFiles(input.workspace.root);
  const files = input.staged
    .map((entry) => buildFileChange(input.workspace, entry, input.readDisk, included))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const models: string[] = [];
  for (const f of files) for (const m of f.models) if (!models.includes(m)) models.push(m);
  return {
    id: input.id,
    workspace: input.workspace.root,
    goal: input.goal,
    createdAt: (input.createdAt ?? new Date()).toISOString(),
    models,
    files,
    digest: changesetDigest(files),
    status: "pending",
  };
}

/** SHA-256 binding a file change's identity: path, base, result and mode. */
export function fileDigest(path: string, base: BaseState, after: AfterState | null): string {
  return sha256(
    [path, base.exists ? base.hash : "absent", base.mode ?? "", after ? after.hash : "deleted", after?.mode ?? ""].join(
      "\0",
    ),
  );
}

/** SHA-256 over the file digests in path order. */
export function changesetDigest(files: FileChange[]): string {
  return sha256(files.map((f) => f.digest).join("\n"));
}

/** A new changeset id: sortable by time, unique enough for one machine. */
export function newChangesetId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

/**
 * The same staged result rebuilt on a new base (today's disk, after a conflict), so the
 * review shows what approving it would now do. Null when nothing is left to change (a
 * delete of a file that is already gone).
 */
export function rebaseFileChange(
  ws: Workspace,
  file: FileChange,
  base: BaseState,
  readDisk: (real: string) => Uint8Array | null,
): FileChange | null {
  if (!base.exists && file.after === null) return null;
  const after = file.after ? { bytes: file.after.bytes, mode: file.after.mode } : null;
  return buildFileChange(
    ws,
    { real: file.real, base, after, origins: file.origins, models: file.models, stagedAt: 0 },
    readDisk,
    includedConfigFiles(ws.root),
  );
}

function buildFileChange(
  ws: Workspace,
  entry: StagedEntry,
  readDisk: (real: string) => Uint8Array | null,
  gitIncluded: ReadonlySet<string>,
): FileChange {
  const path = displayPath(ws, entry.real);
  const inside = isInside(ws.root, entry.real);
  const after: AfterState | null = entry.after
    ? { bytes: entry.after.bytes, hash: sha256(entry.after.bytes), mode: entry.after.mode }
    : null;
  let before: Uint8Array | undefined;
  if (entry.base.exists) {
    const onDisk = readDisk(entry.real);
    // Only the exact content the change was built on is a valid "before"; if the disk moved, apply will report the conflict.
    if (onDisk && sha256(onDisk) === entry.base.hash) before = onDisk;
  }
  const kind: FileChange["kind"] = !entry.base.exists ? "create" : after ? "modify" : "delete";
  const beforeText = before ? (decodeText(before)?.text ?? null) : entry.base.exists ? null : "";
  const afterText = after ? (decodeText(after.bytes)?.text ?? null) : "";
  const binary = (before !== undefined && beforeText === null) || (after !== null && afterText === null);
  const delta = !binary && beforeText !== null && afterText !== null ? lineDelta(beforeText, afterText) : null;
  const flags = flagsFor({
    path,
    inside,
    kind,
    beforeText,
    afterText,
    binary,
    becameBinary: kind === "modify" && beforeText !== null && afterText === null,
    baseMode: entry.base.mode,
    afterMode: after?.mode ?? null,
    // Binary content has no line diff; its revealed text is still searched for credentials.
    addedLines: delta?.addedLines ?? (binary && after ? splitLines(revealBytes(after.bytes)) : []),
    removed: delta?.removed ?? 0,
    beforeLineCount: beforeText === null ? 0 : splitLines(beforeText).length,
    gitIncluded: gitIncluded.has(entry.real),
  });
  return {
    path,
    real: entry.real,
    kind,
    base: entry.base,
    after,
    ...(before ? { before } : {}),
    origins: entry.origins,
    models: entry.models,
    flags,
    added: delta?.added ?? 0,
    removed: delta?.removed ?? 0,
    binary,
    digest: fileDigest(path, entry.base, after),
  };
}
