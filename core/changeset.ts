import type { ChangeOrigin } from "./file-ops.ts";

/** The disk state a change was built on, taken when the file was first staged. */
export interface BaseState {
  exists: boolean;
  /** SHA-256 of the disk content; null when the file did not exist. */
  hash: string | null;
  size: number;
  /** Permission bits; null when the file did not exist. */
  mode: number | null;
}

/** The content a change leaves behind; null in FileChange.after means the file is deleted. */
export interface AfterState {
  bytes: Uint8Array;
  hash: string;
  mode: number;
}

/** Why a reviewer should look twice at a change. */
export type ChangeFlag =
  | "secret"
  | "runs-code"
  | "lockfile"
  | "executable"
  | "binary"
  | "large-deletion"
  | "outside-workspace";

/** One file's pending change: base, result, provenance and the model that wrote it. */
export interface FileChange {
  /** Workspace-relative path with `/` separators (absolute when outside the workspace). */
  path: string;
  /** Real absolute path the change is applied to. */
  real: string;
  kind: "create" | "modify" | "delete";
  base: BaseState;
  after: AfterState | null;
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
export type ChangesetStatus = "pending" | "applied" | "partial" | "rejected" | "undone";

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
}
