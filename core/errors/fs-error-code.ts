// What a file system error says, read by its code: kept beside the error classes because
// every reader of Pencil's own state decides with these whether to say a failure or take "none".

/** True when a file system error says the path is not there (only that is "none"; any other failure is said). */
export function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ENOENT";
}

/** An error's code (EACCES, EIO…) or, when it has none, its message: what the person is told it failed with. */
export function errorCause(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : error instanceof Error ? error.message : String(error);
}
