import { readdirSync, readFileSync } from "node:fs";
import { errorCause, isMissing } from "./errors/fs-error-code.ts";

// Pencil's own state (changesets, sessions, the journal) is read one way: a file that is not there is
// "none", which the caller decides the meaning of; one that is there but cannot be read or parsed is an
// error of the caller's kind that says what to do, never taken as none.

/** A state file's text, or null when it is not there; any other failure is thrown as `unreadable(cause)` (cause: EACCES, EIO…). */
export function readStateText(file: string, unreadable: (cause: string) => Error): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    if (isMissing(error)) return null;
    throw unreadable(errorCause(error));
  }
}

/** A state file's text parsed as JSON; text that does not parse is thrown as `damaged(the parser's message)`. */
export function parseStateJson(text: string, damaged: (cause: string) => Error): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw damaged(errorCause(error));
  }
}

/** The names in a state directory; none when it is not there yet, any other failure thrown as `unreadable(cause)`. */
export function listStateDir(dir: string, unreadable: (cause: string) => Error): string[] {
  try {
    return readdirSync(dir);
  } catch (error) {
    if (isMissing(error)) return [];
    throw unreadable(errorCause(error));
  }
}
