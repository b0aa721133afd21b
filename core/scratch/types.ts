import type { FileOps } from "../file-ops.ts";
import type { OverlayLayers } from "./overlay.ts";
import type { WalkRules } from "../policy/walk.ts";
import type { Workspace } from "../workspace.ts";

/**
 * How shared (not copied) directories reach the command. `namespace`: an empty
 * directory in the scratch copy that the runner bind-mounts the real one on,
 * read-only, in a private mount namespace. `plain`: a symbolic link to the real
 * directory, so writes through it would land on disk; they are detected by
 * fingerprinting the real directory before and after, not prevented.
 */
export type ShareMode = "namespace" | "plain";

/** A real directory the command sees without it being copied. */
export interface SharedDir {
  /** Workspace-relative path. */
  rel: string;
  /** Real path of the directory shared. */
  real: string;
  /** Paths (absolute, inside the scratch copy) of entries the policy hides; the namespace runner masks them. */
  masks: { path: string; dir: boolean }[];
}

/** The state of one entry of the scratch copy, enough to tell whether a command touched it. */
export interface EntrySig {
  kind: "file" | "link" | "other";
  dev: number;
  ino: number;
  size: number;
  mode: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** A scratch copy of workspace + overlay, ready for a command. */
export interface Scratch {
  /** The real workspace the copy was made from. */
  ws: Workspace;
  /** The temporary directory holding everything below; removed by disposeScratch. */
  root: string;
  /** The copy of the workspace: where the command runs. */
  dir: string;
  /** HOME for the command (empty). */
  home: string;
  /** TMPDIR for the command. */
  tmp: string;
  /** An empty directory, mounted over hidden directories in shared ones. */
  empty: string;
  share: ShareMode;
  shared: SharedDir[];
  /** Namespace mode: real directories the runner bind-mounts read-only at `target` (shared directories, git's object store). */
  mounts: { source: string; target: string }[];
  /** Namespace mode: credential-free copies of settings files the sandbox masks (showFilteredSettings), bound over the masks last. */
  filteredOver?: { source: string; target: string }[];
  /** Entries left out because the policy hides them (their names are not reported). */
  hidden: number;
  /** A copy's hidden files (workspace-relative) whose names ScratchOptions.listHidden accepts: the settings files shown filtered. */
  hiddenFiles?: string[];
  /** Things the model should know about the copy (e.g. git metadata not available). */
  notes: string[];
  /** Every entry of the copy (no directories) as placed, by workspace-relative path. */
  baseline: Map<string, EntrySig>;
  /** Plain mode: fingerprints of the real shared directories, to detect writes that went through the links. */
  sharedPrints: Map<string, string>;
  /** Gitignore rules of the workspace as the staged view has them. */
  rules: WalkRules;
  /** The staged view the copy was made from: what "unchanged" is compared against. */
  fs: FileOps;
  /** Copy-on-write (namespace only): `dir` is where the runner mounts an overlay of these layers, nothing is copied; absent for a copy. */
  overlay?: OverlayLayers;
}
