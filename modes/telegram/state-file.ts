import { mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { writeFileAtomic } from "../../core/file-ops.ts";

/** Reads a JSON state file; `fallback` when it is missing, and also (reported through `onBad`) when it is unreadable. */
export function readState<T>(file: string, fallback: T, onBad?: (message: string) => void): T {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      onBad?.(`cannot read ${file}: ${(error as Error).message}; starting from empty state`);
    return fallback;
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    onBad?.(`${file} is not valid JSON (${(error as Error).message}); starting from empty state`);
    return fallback;
  }
}

/** Writes a JSON state file atomically (temporary file, then rename), readable by the owner only. */
export function writeState(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomic(file, new TextEncoder().encode(JSON.stringify(value)), 0o600);
}
