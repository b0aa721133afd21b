import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { UnknownChangesetError } from "../errors/unknown-changeset-error.ts";
import { UnreadableStateError } from "../errors/unreadable-state-error.ts";
import { listStateDir, parseStateJson, readStateText } from "../state-file.ts";
import { CommandRecordShape } from "./command-record.ts";
import { changesetDigest, fileDigest, type Changeset, type FileChange } from "./changeset.ts";
import { writeFileAtomic } from "../file-ops.ts";
import { sha256 } from "../hash.ts";

/** Changesets saved under `$PENCIL_HOME/changesets`, one JSON file each, so a review survives a restart. */
export class ChangesetStore {
  readonly dir: string;

  constructor(pencilHome: string) {
    this.dir = join(pencilHome, "changesets");
  }

  /** Saves (or replaces) a changeset atomically. */
  save(changeset: Changeset): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileAtomic(this.pathOf(changeset.id), new TextEncoder().encode(serialize(changeset)), 0o600);
  }

  /** Saves the conversation that produced a changeset, so a rejection with reasons can be sent back after a restart. */
  saveConversation(id: string, messages: unknown[]): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileAtomic(
      join(this.dir, `${this.checkId(id)}.conversation.json`),
      new TextEncoder().encode(JSON.stringify(messages)),
      0o600,
    );
  }

  /** The saved conversation of a changeset, or null when none was saved; one that is there but unreadable or damaged throws. */
  loadConversation(id: string): unknown[] | null {
    const file = join(this.dir, `${this.checkId(id)}.conversation.json`);
    const text = readStateText(
      file,
      (cause) =>
        new UnreadableStateError(
          `Cannot read ${file} (${cause}): fix its permissions or move it aside, then try again; nothing was changed.`,
        ),
    );
    if (text === null) return null;
    const parsed = parseStateJson(
      text,
      (cause) =>
        new UnreadableStateError(
          `${file} is not valid JSON (${cause}): move it aside, then try again (revisions then start from the goal); nothing was changed.`,
        ),
    );
    if (!Array.isArray(parsed))
      throw new UnreadableStateError(`${file} is not a list of messages: move it aside, then try again.`);
    return parsed;
  }

  /** Loads a changeset by id (or unique id prefix); throws with what to do when none or several match. */
  load(idOrPrefix: string): Changeset {
    const ids = this.ids().filter((id) => id === idOrPrefix || id.startsWith(idOrPrefix));
    const exact = ids.find((id) => id === idOrPrefix);
    const id = exact ?? (ids.length === 1 ? ids[0] : undefined);
    if (!id) {
      throw new UnknownChangesetError(
        ids.length === 0
          ? `No changeset ${idOrPrefix} under ${this.dir}: run \`pencil log\` to see the ids.`
          : `${idOrPrefix} matches ${ids.length} changesets (${ids.slice(0, 3).join(", ")}…): give more of the id.`,
      );
    }
    const text = readStateText(
      this.pathOf(id),
      (cause) =>
        new UnreadableStateError(
          `Cannot read ${this.pathOf(id)} (${cause}): fix its permissions (it must be readable by you), then try again; nothing was changed.`,
        ),
    );
    if (text === null) throw new UnknownChangesetError(`Changeset ${id} is gone from ${this.dir} (removed meanwhile).`);
    return deserialize(text, this.pathOf(id));
  }

  /** All saved changeset ids, oldest first (ids sort by time); none when the directory is not there yet, an error when it cannot be read. */
  ids(): string[] {
    const names = listStateDir(
      this.dir,
      (cause) =>
        new UnreadableStateError(
          `Cannot read the changesets directory ${this.dir} (${cause}): fix its permissions (chmod u+rwx ${this.dir}), then try again; nothing was changed.`,
        ),
    );
    return names
      .filter((n) => n.endsWith(".json") && !n.endsWith(".conversation.json"))
      .map((n) => n.slice(0, -5))
      .sort();
  }

  /** All changesets, newest first; unreadable files are skipped and reported through `onBad`. */
  list(onBad?: (file: string, error: Error) => void): Changeset[] {
    const out: Changeset[] = [];
    for (const id of this.ids().reverse()) {
      try {
        out.push(this.load(id));
      } catch (error) {
        onBad?.(this.pathOf(id), error as Error);
      }
    }
    return out;
  }

  /**
   * The newest pending changeset of a workspace, if any. Files that cannot be read
   * and are newer than it (so one of them might be the one wanted) go to `onBad`.
   */
  latestPending(workspaceRoot?: string, onBad?: (file: string, error: Error) => void): Changeset | undefined {
    // Newest first, stopping at the first match: the history can be long.
    for (const id of this.ids().reverse()) {
      let cs: Changeset;
      try {
        cs = this.load(id);
      } catch (error) {
        onBad?.(this.pathOf(id), error as Error);
        continue;
      }
      if (cs.status === "pending" && (!workspaceRoot || cs.workspace === workspaceRoot)) return cs;
    }
    return undefined;
  }

  private pathOf(id: string): string {
    return join(this.dir, `${this.checkId(id)}.json`);
  }

  private checkId(id: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`${id} is not a changeset id (letters, digits, - and _ only).`);
    return id;
  }
}

/** JSON with byte contents as base64; every byte survives, whatever the encoding. */
export function serialize(changeset: Changeset): string {
  return JSON.stringify({
    ...changeset,
    files: changeset.files.map((f) => ({
      ...f,
      after: f.after ? { ...f.after, bytes: toBase64(f.after.bytes) } : null,
      before: f.before ? toBase64(f.before) : undefined,
    })),
  });
}

/** The shape a saved changeset must have before anything in it is used. */
const SavedShape = z.looseObject({
  id: z.string(),
  workspace: z.string(),
  goal: z.string(),
  createdAt: z.string(),
  status: z.enum(["pending", "applied", "partial", "rejected", "undone", "discarded"]),
  digest: z.string(),
  files: z.array(
    z.looseObject({
      path: z.string(),
      real: z.string(),
      kind: z.enum(["create", "modify", "delete"]),
      base: z.looseObject({
        exists: z.boolean(),
        hash: z.string().nullable(),
        size: z.number(),
        mode: z.number().nullable(),
      }),
      after: z.looseObject({ bytes: z.string(), hash: z.string(), mode: z.number() }).nullable(),
      before: z.string().optional(),
      digest: z.string(),
    }),
  ),
  commands: z.array(CommandRecordShape).optional(),
});

/** A saved intent opinion; one of another shape is dropped on load (it is an opinion, and nothing is decided by it). */
const IntentShape = z.object({
  verdict: z.enum(["matches", "more", "less", "unchecked"]),
  detail: z.string(),
  model: z.string(),
  digest: z.string(),
  goal: z.string(),
});

/**
 * Parses a saved changeset and checks it before use: its shape, each file's content
 * against its hash, the before-image against the base hash, and every digest recomputed
 * (an approval binds to them), so a damaged or altered file is refused, not applied.
 */
export function deserialize(text: string, source = "changeset"): Changeset {
  const damaged = (what: string) =>
    new Error(`${source}: ${what}; the file was damaged or altered. Move it aside and re-run the agent.`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${source} is not valid JSON (${(error as Error).message}); move it aside and re-run the agent.`);
  }
  const parsed = SavedShape.safeParse(json);
  if (!parsed.success)
    throw damaged(
      `it is not a changeset (${parsed.error.issues[0]?.path.join(".") || "top level"}: ${parsed.error.issues[0]?.message})`,
    );
  const raw = parsed.data as unknown as Omit<Changeset, "files"> & {
    files: (Omit<FileChange, "after" | "before"> & {
      after: { bytes: string; hash: string; mode: number } | null;
      before?: string;
    })[];
  };
  const files: FileChange[] = raw.files.map((f) => {
    const after = f.after ? { ...f.after, bytes: new Uint8Array(Buffer.from(f.after.bytes, "base64")) } : null;
    if (after && sha256(after.bytes) !== after.hash)
      throw damaged(`the staged content of ${f.path} does not match its hash`);
    const before = f.before ? new Uint8Array(Buffer.from(f.before, "base64")) : undefined;
    if (before && sha256(before) !== f.base.hash)
      throw damaged(`the base content of ${f.path} does not match its hash`);
    if (fileDigest(f.path, f.base, after) !== f.digest)
      throw damaged(`the digest of ${f.path} does not match its content`);
    const { before: _omit, ...rest } = f;
    return { ...rest, after, ...(before ? { before } : {}) };
  });
  if (changesetDigest(files) !== raw.digest) throw damaged("its digest does not match its files");
  const { intent, ...rest } = raw;
  const opinion = intent === undefined ? undefined : IntentShape.safeParse(intent);
  return { ...rest, ...(opinion?.success ? { intent: opinion.data } : {}), files };
}

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}
