import { readFileSync } from "node:fs";
import { newChangesetId } from "../core/staging/changeset.ts";
import { sha256 } from "../core/hash.ts";
import { lineDelta } from "../core/staging/line-diff.ts";
import type { Overlay, StagedEntry } from "../core/staging/overlay.ts";
import { decodeText } from "../core/text.ts";
import { displayPath, type Workspace } from "../core/workspace.ts";
import { replay, type Checkpoint, type Replayed } from "./session-replay.ts";
import {
  entryRecord,
  type CheckpointFile,
  type EntryRecord,
  type LogRecord,
  COMMANDS_KEPT,
  RUNS_KEPT,
  type RunningMark,
  type RunRecord,
  type SessionHeader,
  type SessionStore,
} from "./session-store.ts";

/** What the session remembers of a path it saved last: the content hash and how many origins it had. */
interface SavedState {
  hash: string | null;
  origins: number;
  bytes: Uint8Array | null;
}

/**
 * One workspace's conversation, overlay and changeset as a log on disk, kept in
 * step with a run: after every model step, `saveStep` appends the new messages and
 * the staged files that changed (only those), so a kill -9 loses at most the step
 * in flight. Reopened, it gives back the conversation and the staged entries.
 */
export class SavedSession {
  /** Messages already in the log. */
  private savedMessages = 0;
  /** Leading messages known to be exactly as this Pencil wrote them (their log prefix still has the recorded digest). */
  checkedMessages = 0;
  private readonly saved = new Map<string, SavedState>();

  private constructor(
    readonly store: SessionStore,
    public header: SessionHeader,
    private records: LogRecord[],
  ) {}

  get id(): string {
    return this.header.id;
  }

  /** Starts a new session on a workspace. */
  static create(store: SessionStore, init: { workspace: string; mode: string; goal: string }): SavedSession {
    const header = store.create({ id: newChangesetId(), ...init });
    return new SavedSession(store, header, []);
  }

  /** Opens a saved session (header checked, log read; a torn last line is dropped). Throws SessionFileError / UnknownSessionError. */
  static open(store: SessionStore, id: string): SavedSession {
    const header = store.header(id);
    const log = store.readLog(id);
    const session = new SavedSession(store, header, log.records);
    const state = replay(log.records);
    const checked = header.checked;
    if (
      checked &&
      checked.bytes <= log.bytes.length &&
      sha256(log.bytes.subarray(0, checked.bytes)) === checked.sha256
    ) {
      const within = log.ends.filter((end) => end <= checked.bytes).length;
      session.checkedMessages = replay(log.records, within - 1).messages.length;
    }
    session.savedMessages = state.messages.length;
    for (const e of state.entries.values())
      session.saved.set(e.real, { hash: e.after?.hash ?? null, origins: e.origins.length, bytes: null });
    return session;
  }

  /** The state the log adds up to (at the end, or at checkpoint `n`). */
  state(n?: number): Replayed {
    if (n === undefined) return replay(this.records);
    const cp = this.checkpoints().find((c) => c.n === n);
    if (!cp) throw new RangeError(this.noCheckpoint(n));
    return replay(this.records, cp.record);
  }

  /** The checkpoints so far. */
  checkpoints(): Checkpoint[] {
    return replay(this.records).checkpoints;
  }

  /** The staged entries of a replayed state, with their content read back (and checked) from the blobs. */
  stagedEntries(state: Replayed): StagedEntry[] {
    return [...state.entries.values()].map((e) => this.toStaged(e));
  }

  /** Appends user messages (a goal, a follow-up, reasons). */
  saveTurn(messages: unknown[]): void {
    this.append([{ t: "turn", at: new Date().toISOString(), messages }]);
    this.savedMessages += messages.length;
  }

  /**
   * Saves one model step: the messages not yet saved, and every staged path that
   * changed since the last save (new blobs only). `readDisk` gives the disk content
   * a change is counted against.
   */
  saveStep(messages: readonly unknown[], overlay: Overlay, ws: Workspace, model?: string): void {
    const fresh = messages.slice(this.savedMessages);
    const changed = overlay.drainChanged();
    const staged: EntryRecord[] = [];
    const dropped: string[] = [];
    const tools: string[] = [];
    const files: CheckpointFile[] = [];
    const blobs = new Map<string, Uint8Array>();
    for (const real of changed) {
      const entry = overlay.entry(real);
      const before = this.saved.get(real);
      if (!entry) {
        if (before) {
          dropped.push(real);
          files.push({ path: displayPath(ws, real), kind: "unstaged", added: 0, removed: 0 });
          this.saved.delete(real);
        }
        continue;
      }
      const { record, blob } = entryRecord(entry);
      if (before && before.hash === (record.after?.hash ?? null) && before.origins === record.origins.length) continue;
      staged.push(record);
      if (blob) blobs.set(blob[0], blob[1]);
      for (const o of entry.origins.slice(before?.origins ?? 0)) if (!tools.includes(o.tool)) tools.push(o.tool);
      const prev = before
        ? (before.bytes ?? (before.hash ? this.store.blob(this.id, before.hash) : new Uint8Array()))
        : entry.base.exists
          ? readBase(entry)
          : new Uint8Array();
      files.push(countFile(ws, entry, prev));
      this.saved.set(real, {
        hash: record.after?.hash ?? null,
        origins: record.origins.length,
        bytes: entry.after?.bytes ?? null,
      });
    }
    if (fresh.length === 0 && staged.length === 0 && dropped.length === 0) return;
    this.append(
      [
        {
          t: "step",
          at: new Date().toISOString(),
          messages: [...fresh],
          staged,
          dropped,
          tools,
          files,
          ...(model ? { model } : {}),
        },
      ],
      blobs,
    );
    this.savedMessages += fresh.length;
  }

  /** Records a review: what was applied and rejected (with reasons) and the paths that left the overlay. */
  saveReview(
    changeset: string,
    applied: string[],
    rejected: { path: string; reason: string }[],
    overlay: Overlay,
  ): void {
    const dropped = overlay.drainChanged().filter((real) => !overlay.entry(real));
    for (const real of dropped) this.saved.delete(real);
    this.append([{ t: "review", at: new Date().toISOString(), changeset, applied, rejected, dropped }]);
  }

  /** Marks a run as going (survives a kill -9, which is how an interrupted run is found). */
  markRunning(mark: Omit<RunningMark, "pid" | "startedAt">): void {
    this.header = { ...this.header, running: { pid: process.pid, startedAt: new Date().toISOString(), ...mark } };
    this.store.writeHeader(this.header);
  }

  /** Ends the running mark and records the session's current changeset (null: nothing staged, the last one stays named). */
  finishRun(changeset: string | null, run?: RunRecord): void {
    // With nothing staged now, the last changeset stays named: how it was reviewed is still news for the next turn.
    const { running: _done, checked: _old, ...rest } = this.header;
    // What this run left in the log is exactly what it wrote: its digest spares the next load from checking it again.
    const bytes = this.store.logBytes(this.id);
    const runs = run ? [...(rest.runs ?? []), keptRun(run)].slice(-RUNS_KEPT) : rest.runs;
    this.header = {
      ...rest,
      ...(changeset ? { changeset } : {}),
      ...(runs ? { runs } : {}),
      checked: { bytes: bytes.length, sha256: sha256(bytes) },
    };
    this.store.writeHeader(this.header);
  }

  /**
   * Goes back to checkpoint `n`: the log is cut right after it, so later staged
   * changes and later conversation are gone. Refused for a checkpoint already reviewed.
   */
  rewind(n: number): Replayed {
    const cps = this.checkpoints();
    const cp = cps.find((c) => c.n === n);
    if (!cp) throw new RangeError(this.noCheckpoint(n));
    if (cp.reviewed) {
      const open = cps.filter((c) => !c.reviewed).map((c) => c.n);
      throw new RangeError(
        `Checkpoint ${n} was already reviewed (its files were applied or rejected); rewind goes back only within the pending changes${open.length ? ` (checkpoints ${open[0]}–${open[open.length - 1]})` : ", and there are none"}.`,
      );
    }
    this.records = this.records.slice(0, cp.record + 1);
    this.store.rewriteLog(this.id, this.records);
    this.checkedMessages = 0;
    const state = replay(this.records);
    this.savedMessages = state.messages.length;
    this.saved.clear();
    for (const e of state.entries.values())
      this.saved.set(e.real, { hash: e.after?.hash ?? null, origins: e.origins.length, bytes: null });
    return state;
  }

  private append(records: LogRecord[], blobs?: Map<string, Uint8Array>): void {
    this.store.append(this.id, records, blobs);
    this.records.push(...records);
  }

  private toStaged(e: EntryRecord): StagedEntry {
    return {
      real: e.real,
      base: e.base,
      after: e.after ? { bytes: this.store.blob(this.id, e.after.hash), mode: e.after.mode } : null,
      origins: e.origins,
      models: e.models,
      stagedAt: e.stagedAt,
    };
  }

  private noCheckpoint(n: number): string {
    const count = this.checkpoints().length;
    return count === 0
      ? `Session ${this.id} has no checkpoints (no step staged anything).`
      : `No checkpoint ${n}: session ${this.id} has checkpoints 1–${count}. See them with: pencil steps ${this.id}`;
  }
}

/** One file of a checkpoint: its kind and the lines this step added and removed (against the previous save, else the disk). */
function countFile(ws: Workspace, entry: StagedEntry, prev: Uint8Array | null): CheckpointFile {
  const path = displayPath(ws, entry.real);
  const kind: CheckpointFile["kind"] = !entry.base.exists ? "create" : entry.after ? "modify" : "delete";
  const prevText = prev ? (decodeText(prev)?.text ?? null) : null;
  const nextText = entry.after ? (decodeText(entry.after.bytes)?.text ?? null) : "";
  if (prevText === null || nextText === null) return { path, kind, added: 0, removed: 0 };
  const delta = lineDelta(prevText, nextText);
  return { path, kind, added: delta.added, removed: delta.removed };
}

function readBase(entry: StagedEntry): Uint8Array | null {
  try {
    const bytes = readFileSync(entry.real);
    return sha256(bytes) === entry.base.hash ? bytes : null;
  } catch {
    // Unreadable now: no "before" for it; apply checks the base again and reports a conflict.
    return null;
  }
}

/** A run as the header keeps it: its first COMMANDS_KEPT commands, the rest counted. */
function keptRun(run: RunRecord): RunRecord {
  if (run.commands.length <= COMMANDS_KEPT) return run;
  return { ...run, commands: run.commands.slice(0, COMMANDS_KEPT), moreCommands: run.commands.length - COMMANDS_KEPT };
}
