/** A changeset or apply named for another workspace than the one Pencil runs on (exit 2). */
export class WorkspaceMismatchError extends Error {
  override name = "WorkspaceMismatchError";
}
