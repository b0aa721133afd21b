import type { CheckpointFile, EntryRecord, LogRecord } from "./session-store.ts";

/** A model step that staged or dropped something: what `steps` lists and `rewind`/`fork` go back to. */
export interface Checkpoint {
  /** 1-based, over the whole session. */
  n: number;
  /** Index of its record in the log. */
  record: number;
  at: string;
  tools: string[];
  files: CheckpointFile[];
  model?: string;
  /** True when a review came after it: its files were decided, so rewind cannot go back to it. */
  reviewed: boolean;
}

/** What a log adds up to at some point: the conversation, the staged entries by path, and the checkpoints so far. */
export interface Replayed {
  messages: unknown[];
  entries: Map<string, EntryRecord>;
  checkpoints: Checkpoint[];
  /** Reasons the owner gave for rejections, in order (compaction never drops them). */
  rejections: { path: string; reason: string }[];
  /** Files applied to disk by the session's reviews, in order. */
  applied: string[];
}

/** Folds log records into the state they describe, up to (and including) record index `until`. A pure function. */
export function replay(records: LogRecord[], until = records.length - 1): Replayed {
  const messages: unknown[] = [];
  const entries = new Map<string, EntryRecord>();
  const checkpoints: Checkpoint[] = [];
  const rejections: { path: string; reason: string }[] = [];
  const applied: string[] = [];
  for (let i = 0; i <= until && i < records.length; i++) {
    const r = records[i]!;
    if (r.t === "turn") {
      messages.push(...r.messages);
      continue;
    }
    if (r.t === "review") {
      for (const real of r.dropped) entries.delete(real);
      for (const c of checkpoints) c.reviewed = true;
      for (const rej of r.rejected) if (rej.reason) rejections.push(rej);
      for (const path of r.applied) if (!applied.includes(path)) applied.push(path);
      continue;
    }
    messages.push(...r.messages);
    for (const e of r.staged) entries.set(e.real, e);
    for (const real of r.dropped) entries.delete(real);
    if (r.staged.length > 0 || r.dropped.length > 0) {
      checkpoints.push({
        n: checkpoints.length + 1,
        record: i,
        at: r.at,
        tools: r.tools,
        files: r.files,
        ...(r.model ? { model: r.model } : {}),
        reviewed: false,
      });
    }
  }
  return { messages, entries, checkpoints, rejections, applied };
}
