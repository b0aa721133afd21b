import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { buildChangeset, type Changeset, type FileChange } from "../core/staging/changeset.ts";
import type { Overlay, StagedEntry } from "../core/staging/overlay.ts";
import { decodeText } from "../core/text.ts";
import type { Runtime } from "./runtime.ts";
import type { Env } from "../core/pencil-home.ts";

/** What came back from the owner's editor: new content, the same content, or why it could not be edited. */
export type EditorOutcome =
  | { kind: "changed"; bytes: Uint8Array }
  | { kind: "unchanged" }
  | { kind: "refused"; reason: string };

/** The tool name recorded in a file's origins when the owner replaced its staged content. */
const OWNER_EDIT = "edited by you";

/** The editor command: $VISUAL, then $EDITOR, else vi — the order git uses. */
function editorOf(env: Env): string {
  for (const name of ["VISUAL", "EDITOR"] as const) {
    const value = env[name]?.trim();
    if (value) return value;
  }
  return "vi";
}

/**
 * Opens the staged version of `file` in the owner's editor, in a private temporary
 * copy (never the workspace file, which still holds the old content), and returns what
 * was saved there. The editor gets the terminal; the copy is removed afterwards.
 */
export function openStagedInEditor(file: FileChange, env: Env): EditorOutcome {
  if (!file.after)
    return {
      kind: "refused",
      reason: `${file.path} is staged for deletion: there is no content to edit. Reject it to keep the file.`,
    };
  if (file.binary || decodeText(file.after.bytes) === null)
    return { kind: "refused", reason: `${file.path} is binary; it cannot be edited as text.` };
  const editor = editorOf(env);
  const dir = mkdtempSync(join(tmpdir(), "pencil-edit-"));
  try {
    // Same base name, so the editor picks the right syntax; the directory is 0700 from mkdtemp.
    const copy = join(dir, basename(file.path));
    writeFileSync(copy, file.after.bytes, { mode: 0o600 });
    // Through the shell, as git does, so `code --wait` or `vim -u NONE` work; the path is an argument, never spliced in.
    const run = spawnSync("/bin/sh", ["-c", `${editor} "$1"`, "pencil-editor", copy], {
      stdio: "inherit",
      env: { ...process.env, ...env } as NodeJS.ProcessEnv,
    });
    if (run.error)
      return {
        kind: "refused",
        reason: `The editor (${editor}) could not start: ${run.error.message}. The staged content is unchanged.`,
      };
    if (run.status !== 0)
      return {
        kind: "refused",
        reason:
          run.status === 127 && !env.VISUAL?.trim() && !env.EDITOR?.trim()
            ? "Neither $VISUAL nor $EDITOR is set and vi was not found: set one (e.g. export EDITOR=nano) to edit a staged file; the staged content is unchanged."
            : `The editor (${editor}) exited with ${run.status ?? run.signal}; the staged content is unchanged.`,
      };
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(readFileSync(copy));
    } catch {
      // The editor removed or locked its copy: nothing is taken from it, and the refusal below says why.
      return {
        kind: "refused",
        reason: "The edited copy was removed or renamed by the editor; the staged content is unchanged.",
      };
    }
    return Buffer.compare(Buffer.from(bytes), Buffer.from(file.after.bytes)) === 0
      ? { kind: "unchanged" }
      : { kind: "changed", bytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A live run whose staging follows an owner's edit: its overlay, and its changeset when it is the one edited. */
export interface LiveStaging {
  readonly overlay: Overlay;
  changeset: Changeset | null;
}

/**
 * Replaces one file's staged content with the owner's, rebuilds the changeset (diff,
 * flags, digests: earlier approvals and buttons no longer match it), marks the file
 * (by default "edited by you"), saves it, and keeps a live run's overlay in step.
 */
export function replaceStagedContent(
  runtime: Runtime,
  cs: Changeset,
  path: string,
  bytes: Uint8Array,
  run: LiveStaging | null = null,
  mark: { tool: string; edited: boolean } = { tool: OWNER_EDIT, edited: true },
): Changeset {
  const target = cs.files.find((f) => f.path === path);
  if (!target || !target.after) throw new Error(`${path} is not a staged file of ${cs.id}.`);
  const entries: StagedEntry[] = cs.files.map((f) => ({
    real: f.real,
    base: f.base,
    after:
      f === target
        ? { bytes, mode: target.after!.mode }
        : f.after
          ? { bytes: f.after.bytes, mode: f.after.mode }
          : null,
    origins:
      f === target ? [...f.origins, { tool: mark.tool, callId: "owner", model: "you", readsBefore: [] }] : f.origins,
    models: f.models,
    stagedAt: Date.now(),
  }));
  const befores = new Map(cs.files.map((f) => [f.real, f.before ?? null]));
  const rebuilt = buildChangeset({
    id: cs.id,
    goal: cs.goal,
    workspace: runtime.ws,
    staged: entries,
    readDisk: (real) => befores.get(real) ?? null,
    createdAt: new Date(cs.createdAt),
  });
  const updated: Changeset = {
    ...cs,
    files: rebuilt.files,
    digest: rebuilt.digest,
    models: rebuilt.models,
  };
  if (mark.edited) updated.editedByOwner = [...new Set([...(cs.editedByOwner ?? []), path])];
  runtime.store.save(updated);
  if (run) {
    const entry = entries.find((e) => e.real === target.real)!;
    run.overlay.adopt(entry);
    if (run.changeset?.id === cs.id) run.changeset = updated;
  }
  return updated;
}
