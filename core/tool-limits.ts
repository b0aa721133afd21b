// The caps every tool call works within; settings may change them (limits.* in the user's settings).

/** Caps that keep tool output and staged content bounded. */
export interface ToolLimits {
  /** Largest file a tool reads or stages, in bytes. */
  maxFileBytes: number;
  /** Lines `read_file` returns when no `limit` is given. */
  readLineCap: number;
  /** Characters of one line shown before it is cut with a marker. */
  maxLineChars: number;
  /** Matches `search` returns before it stops and says so. */
  searchMaxMatches: number;
  /** Entries `list_files` returns before it stops and says so. */
  listMaxEntries: number;
  /** Bytes one `run_command` may write to files (scratch copy and temporary space, all its processes together) before it is killed; also the largest file it may write. */
  scratchWriteBytes: number;
  /** Seconds a `run_command` runs before it and every process it started are killed, when the call asks for no `timeout`. */
  commandSeconds: number;
  /** The most seconds a `run_command` call may ask for with its `timeout`; a larger ask gets this many. */
  commandSecondsMax: number;
}

export const DEFAULT_LIMITS: ToolLimits = {
  maxFileBytes: 2 * 1024 * 1024,
  readLineCap: 2000,
  maxLineChars: 2000,
  searchMaxMatches: 200,
  listMaxEntries: 1000,
  scratchWriteBytes: 1024 * 1024 * 1024,
  commandSeconds: 120,
  commandSecondsMax: 600,
};
