import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { BaseState } from "../core/staging/overlay.ts";
import { type CommandRecord, CommandRecordShape } from "../core/staging/command-record.ts";
import type { ChangeOrigin } from "../core/file-ops.ts";
import { writeFileAtomic } from "../core/file-ops.ts";
import { sha256 } from "../core/hash.ts";
import type { StagedEntry } from "../core/staging/overlay.ts";
import { listStateDir, parseStateJson, readStateText } from "../core/state-file.ts";
import { SessionFileError } from "../core/errors/session-file-error.ts";
import { UnknownSessionError } from "../core/errors/unknown-session-error.ts";

/** The session format this Pencil writes; a higher one on disk was written by a newer Pencil and is refused. */
const SESSION_FORMAT = 1;

/** A run going on in a session, written when it starts and cleared when it ends: still set after a kill -9. */
export interface RunningMark {
  pid: number;
  startedAt: string;
  kind: string;
  goal: string;
  /** What a front end needs to close its own traces after a crash (the bot's progress message). */
  tag?: Record<string, string | number>;
}

/** A session's header (`session.json`): what it is, on which workspace, and its current changeset. */
export interface SessionHeader {
  format: number;
  id: string;
  /** Real path of the workspace root. */
  workspace: string;
  mode: string;
  /** The first goal of the session. */
  goal: string;
  createdAt: string;
  /** The changeset the session's staged work was last saved as. */
  changeset?: string;
  running?: RunningMark;
  /** The session's runs, oldest first (the last RUNS_KEPT): what each was asked, what it ran, what it left staged. */
  runs?: RunRecord[];
  /**
   * The log's first `bytes` as this Pencil left them at the end of a run, by SHA-256:
   * a load whose prefix still has this digest need not check those messages again.
   */
  checked?: { bytes: number; sha256: string };
}

/** One run of a session (a goal, a follow-up or a revision), kept whether or not it staged anything. */
export interface RunRecord {
  /** The owner's words for this run. */
  goal: string;
  mode: string;
  startedAt: string;
  endedAt: string;
  /** The changeset its staged work was saved as; null when it staged nothing. */
  changeset: string | null;
  /** The commands it asked to run, in order (at most COMMANDS_KEPT; `moreCommands` counts the rest). */
  commands: CommandRecord[];
  moreCommands?: number;
}

/** Runs kept in a session's header, and commands kept per run. */
export const RUNS_KEPT = 50;
export const COMMANDS_KEPT = 100;

/** A staged file as the log stores it: the content is a blob named by its hash. */
export interface EntryRecord {
  real: string;
  base: BaseState;
  after: { hash: string; mode: number } | null;
  origins: ChangeOrigin[];
  models: string[];
  stagedAt: number;
}

/** One file of a checkpoint, as `steps` shows it. */
export interface CheckpointFile {
  path: string;
  kind: "create" | "modify" | "delete" | "unstaged";
  added: number;
  removed: number;
}

/**
 * One line of a session's log, appended after each step and each turn. `messages`
 * are appended to the conversation; `staged` entries replace the overlay's entry
 * of their path and `dropped` paths leave it. A `step` that staged or dropped
 * anything is a checkpoint.
 */
export type LogRecord =
  | { t: "turn"; at: string; messages: unknown[] }
  | {
      t: "step";
      at: string;
      messages: unknown[];
      staged: EntryRecord[];
      dropped: string[];
      tools: string[];
      files: CheckpointFile[];
      model?: string;
    }
  | {
      t: "review";
      at: string;
      changeset: string;
      applied: string[];
      rejected: { path: string; reason: string }[];
      dropped: string[];
    };

const EntryShape = z.object({
  real: z.string(),
  base: z.object({ exists: z.boolean(), hash: z.string().nullable(), size: z.number(), mode: z.number().nullable() }),
  after: z.object({ hash: z.string(), mode: z.number() }).nullable(),
  origins: z.array(
    z.looseObject({ tool: z.string(), callId: z.string(), model: z.string(), readsBefore: z.array(z.string()) }),
  ),
  models: z.array(z.string()),
  stagedAt: z.number(),
});
const FileShape = z.object({
  path: z.string(),
  kind: z.enum(["create", "modify", "delete", "unstaged"]),
  added: z.number(),
  removed: z.number(),
});
const RecordShape = z.discriminatedUnion("t", [
  z.object({ t: z.literal("turn"), at: z.string(), messages: z.array(z.unknown()) }),
  z.object({
    t: z.literal("step"),
    at: z.string(),
    messages: z.array(z.unknown()),
    staged: z.array(EntryShape),
    dropped: z.array(z.string()),
    tools: z.array(z.string()),
    files: z.array(FileShape),
    model: z.string().optional(),
  }),
  z.object({
    t: z.literal("review"),
    at: z.string(),
    changeset: z.string(),
    applied: z.array(z.string()),
    rejected: z.array(z.object({ path: z.string(), reason: z.string() })),
    dropped: z.array(z.string()),
  }),
]);
const HeaderShape = z.object({
  format: z.number(),
  id: z.string(),
  workspace: z.string(),
  mode: z.string(),
  goal: z.string(),
  createdAt: z.string(),
  changeset: z.string().optional(),
  running: z
    .object({
      pid: z.number(),
      startedAt: z.string(),
      kind: z.string(),
      goal: z.string(),
      tag: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
    })
    .optional(),
  checked: z.object({ bytes: z.number(), sha256: z.string() }).optional(),
  runs: z
    .array(
      z.looseObject({
        goal: z.string(),
        mode: z.string(),
        startedAt: z.string(),
        endedAt: z.string(),
        changeset: z.string().nullable(),
        commands: z.array(CommandRecordShape),
        moreCommands: z.number().optional(),
      }),
    )
    .optional(),
});

/** The log of a session as read from disk; `tornTail` is true when its last line was cut by a crash (that step is lost). */
export interface SessionLog {
  records: LogRecord[];
  tornTail: boolean;
  /** Byte offset in the file where each record's line ends (newline included). */
  ends: number[];
  /** The file's bytes. */
  bytes: Uint8Array;
}

/**
 * Sessions under `$PENCIL_HOME/sessions/<id>/`: `session.json` (the header,
 * replaced atomically when it changes), `log.jsonl` (one record per step or turn,
 * only ever appended, except by a rewind) and `blobs/<sha256>` (each staged
 * content once). Saving after a step writes only that step's record and its new
 * blobs, so the cost does not grow with the length of the session.
 */
export class SessionStore {
  readonly dir: string;

  constructor(pencilHome: string) {
    this.dir = join(pencilHome, "sessions");
  }

  /** Creates a session and returns its header. */
  create(header: Omit<SessionHeader, "format" | "id" | "createdAt"> & { id: string }): SessionHeader {
    const full: SessionHeader = { format: SESSION_FORMAT, createdAt: new Date().toISOString(), ...header };
    mkdirSync(join(this.pathOf(full.id), "blobs"), { recursive: true, mode: 0o700 });
    this.writeHeader(full);
    writeFileSync(this.logPath(full.id), "", { mode: 0o600, flag: "a" });
    return full;
  }

  /** Replaces a session's header atomically. */
  writeHeader(header: SessionHeader): void {
    writeFileAtomic(
      join(this.pathOf(header.id), "session.json"),
      new TextEncoder().encode(JSON.stringify(header)),
      0o600,
    );
  }

  /** Reads a session's header; throws SessionFileError for a damaged or newer one, UnknownSessionError when there is none. */
  header(id: string): SessionHeader {
    const file = join(this.pathOf(id), "session.json");
    const text = readStateText(
      file,
      (cause) =>
        new SessionFileError(
          `Cannot read ${file} (${cause}): fix its permissions (it must be readable by you), then try again; nothing was changed.`,
        ),
    );
    if (text === null) throw new UnknownSessionError(`No session ${id} under ${this.dir}.`, this.ids());
    const json = parseStateJson(
      text,
      (cause) =>
        new SessionFileError(
          `${file} is not valid JSON (${cause}). Move the directory ${this.pathOf(id)} aside to start afresh; its changeset, if saved, is still reviewable with pencil review.`,
        ),
    );
    const format = (json as { format?: unknown } | null)?.format;
    if (typeof format === "number" && format > SESSION_FORMAT) {
      throw new SessionFileError(
        `${file} was written by a newer Pencil (session format ${format}; this one reads ${SESSION_FORMAT}). Update Pencil to continue it; nothing was changed.`,
      );
    }
    const parsed = HeaderShape.safeParse(json);
    if (!parsed.success) {
      throw new SessionFileError(
        `${file} is not a session header (${parsed.error.issues[0]?.path.join(".") || "top level"}: ${parsed.error.issues[0]?.message}). Move ${this.pathOf(id)} aside; nothing was changed.`,
      );
    }
    return parsed.data as SessionHeader;
  }

  /** Appends records (and the blobs they name) to a session's log: one write, so a kill -9 leaves at most a torn last line. */
  append(id: string, records: LogRecord[], blobs: Map<string, Uint8Array> = new Map()): void {
    for (const [hash, bytes] of blobs) this.putBlob(id, hash, bytes);
    if (records.length === 0) return;
    appendFileSync(this.logPath(id), records.map((r) => `${JSON.stringify(r)}\n`).join(""), { mode: 0o600 });
  }

  /** The log's bytes as they are now (to record the digest of what a run left). */
  logBytes(id: string): Uint8Array {
    return readFileSync(this.logPath(id));
  }

  /** Replaces the whole log with `records` atomically (a rewind). */
  rewriteLog(id: string, records: LogRecord[]): void {
    writeFileAtomic(
      this.logPath(id),
      new TextEncoder().encode(records.map((r) => `${JSON.stringify(r)}\n`).join("")),
      0o600,
    );
  }

  /** Reads a session's log; a torn last line (a crash mid-append) is dropped, any other damage is a SessionFileError. */
  readLog(id: string): SessionLog {
    const file = this.logPath(id);
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(file);
    } catch (error) {
      throw new SessionFileError(
        `Cannot read ${file}: ${(error as Error).message}. Move ${this.pathOf(id)} aside; nothing was changed.`,
      );
    }
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
    const lines = text.split("\n");
    const complete = text.endsWith("\n") || text === "";
    const records: LogRecord[] = [];
    const ends: number[] = [];
    let offset = 0;
    let tornTail = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      offset += Buffer.byteLength(line) + 1;
      if (line === "") continue;
      const last = i === lines.length - 1;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        // Not JSON: a torn last line is the end of an interrupted write; anywhere else it is damage, said below.
        if (last && !complete) {
          tornTail = true;
          break;
        }
        throw new SessionFileError(
          `${file} line ${i + 1} is damaged (not JSON). Move ${this.pathOf(id)} aside; its changeset, if saved, is still reviewable with pencil review.`,
        );
      }
      const parsed = RecordShape.safeParse(json);
      if (!parsed.success) {
        throw new SessionFileError(
          `${file} line ${i + 1} is not a session record (${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message}). Move ${this.pathOf(id)} aside; nothing was changed.`,
        );
      }
      records.push(parsed.data as LogRecord);
      ends.push(offset);
    }
    return { records, tornTail, ends, bytes };
  }

  /** A staged content by hash, checked against it. */
  blob(id: string, hash: string): Uint8Array {
    const file = join(this.pathOf(id), "blobs", checkHash(hash));
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(file);
    } catch {
      throw new SessionFileError(
        `${file} is missing: the session's staged content is incomplete. Move ${this.pathOf(id)} aside.`,
      );
    }
    if (sha256(bytes) !== hash)
      throw new SessionFileError(
        `${file} does not match its hash: the staged content was damaged. Move ${this.pathOf(id)} aside.`,
      );
    return bytes;
  }

  /** Every session id, oldest first (ids sort by time). */
  ids(): string[] {
    const names = listStateDir(
      this.dir,
      (cause) =>
        new SessionFileError(
          `Cannot read the sessions directory ${this.dir} (${cause}): fix its permissions (chmod u+rwx ${this.dir}), then try again; nothing was changed.`,
        ),
    );
    return names.filter((n) => /^[A-Za-z0-9_-]+$/.test(n)).sort();
  }

  /** The headers of a workspace's sessions, most recently active first; damaged ones are reported through `onBad`. */
  listFor(workspace: string, onBad?: (id: string, error: Error) => void): SessionHeader[] {
    const out: { header: SessionHeader; active: number }[] = [];
    for (const id of this.ids()) {
      try {
        const header = this.header(id);
        if (header.workspace !== workspace) continue;
        out.push({ header, active: this.lastActive(id) });
      } catch (error) {
        onBad?.(id, error as Error);
      }
    }
    return out.sort((a, b) => b.active - a.active || (a.header.id < b.header.id ? 1 : -1)).map((o) => o.header);
  }

  /** Resolves an id or a unique prefix of one; UnknownSessionError (listing the known ids) otherwise. */
  resolveId(idOrPrefix: string): string {
    const ids = this.ids();
    if (ids.includes(idOrPrefix)) return idOrPrefix;
    const matches = ids.filter((id) => id.startsWith(idOrPrefix));
    if (matches.length === 1) return matches[0]!;
    throw new UnknownSessionError(
      matches.length === 0
        ? `No session ${idOrPrefix}.`
        : `${idOrPrefix} matches ${matches.length} sessions: give more of the id.`,
      ids,
    );
  }

  /** True when a session directory exists. */
  has(id: string): boolean {
    return /^[A-Za-z0-9_-]+$/.test(id) && existsSync(join(this.dir, id, "session.json"));
  }

  /** The directory of one session. */
  pathOf(id: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(id))
      throw new UnknownSessionError(`${id} is not a session id (letters, digits, - and _ only).`, []);
    return join(this.dir, id);
  }

  private logPath(id: string): string {
    return join(this.pathOf(id), "log.jsonl");
  }

  private lastActive(id: string): number {
    try {
      return statSync(this.logPath(id)).mtimeMs;
    } catch {
      // Only orders the list: a session without a readable log sorts last, and reading it says what is wrong.
      return 0;
    }
  }

  private putBlob(id: string, hash: string, bytes: Uint8Array): void {
    const file = join(this.pathOf(id), "blobs", checkHash(hash));
    // Content-addressed: a blob already there is the same bytes.
    if (existsSync(file)) return;
    writeFileAtomic(file, bytes, 0o600);
  }
}

/** A staged entry as a log record, and the blob its content goes to (none for a deletion). */
export function entryRecord(entry: StagedEntry): { record: EntryRecord; blob?: [string, Uint8Array] } {
  const hash = entry.after ? sha256(entry.after.bytes) : null;
  return {
    record: {
      real: entry.real,
      base: entry.base,
      after: entry.after && hash ? { hash, mode: entry.after.mode } : null,
      origins: entry.origins,
      models: entry.models,
      stagedAt: entry.stagedAt,
    },
    ...(entry.after && hash ? { blob: [hash, entry.after.bytes] as [string, Uint8Array] } : {}),
  };
}

function checkHash(hash: string): string {
  if (!/^[0-9a-f]{64}$/.test(hash)) throw new SessionFileError(`${hash} is not a content hash.`);
  return hash;
}
