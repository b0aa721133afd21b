import { PencilError, UsageFailure } from "../core/errors.ts";

/** A changeset or apply named for another workspace than the one Pencil runs on (exit 2). */
export class WorkspaceMismatchError extends UsageFailure {
  override name = "WorkspaceMismatchError";
}

/** A session or checkpoint a command names that cannot be used (none with that id or number, a fork directory in the way): exit 2. */
export class CheckpointError extends UsageFailure {
  override name = "CheckpointError";
}

/** A session id that matches no session (exit 2); `known` lists the ones that exist. */
export class UnknownSessionError extends UsageFailure {
  override name = "UnknownSessionError";
  constructor(
    message: string,
    readonly known: string[],
  ) {
    super(message);
  }
}

/** A session file that cannot be used as it is; says which file and what to do. Nothing was overwritten. */
export class SessionFileError extends PencilError {
  override name = "SessionFileError";
}
