/** A changeset or apply named for another workspace than the one Pencil runs on (exit 2). */
export class WorkspaceMismatchError extends Error {
  override name = "WorkspaceMismatchError";
}

/** A session or checkpoint a command names that cannot be used (none with that id or number, a fork directory in the way): exit 2. */
export class CheckpointError extends Error {
  override name = "CheckpointError";
}

/** A session id that matches no session (exit 2); `known` lists the ones that exist. */
export class UnknownSessionError extends Error {
  override name = "UnknownSessionError";
  constructor(
    message: string,
    readonly known: string[],
  ) {
    super(message);
  }
}

/** A session file that cannot be used as it is; says which file and what to do. Nothing was overwritten. */
export class SessionFileError extends Error {
  override name = "SessionFileError";
}
