import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";

/** The line of a .env file that sets the owner, with or without `export`. */
const OWNER_LINE = /^\s*(?:export\s+)?TELEGRAM_OWNER_ID\s*=/;

/**
 * Writes `TELEGRAM_OWNER_ID=<id>` into `$PENCIL_HOME/.env`: the line that set it
 * before is replaced in place, every other line is kept as it was, and the file is
 * written whole (a temporary file renamed over it) with mode 600, since it holds keys.
 * Returns the file's path.
 */
export function saveOwnerId(pencilHome: string, id: number): string {
  mkdirSync(pencilHome, { recursive: true, mode: 0o700 });
  const file = join(pencilHome, ".env");
  let lines: string[] = [];
  try {
    lines = readFileSync(file, "utf8").split("\n");
  } catch (error) {
    // Only a missing file starts empty; an unreadable one must not be written over.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  if (lines.at(-1) === "") lines.pop();
  const entry = `TELEGRAM_OWNER_ID=${id}`;
  const at = lines.findIndex((line) => OWNER_LINE.test(line));
  if (at === -1) lines.push(entry);
  else lines = [...lines.slice(0, at).concat(entry), ...lines.slice(at + 1).filter((line) => !OWNER_LINE.test(line))];
  const temp = `${file}.${process.pid}.tmp`;
  const fd = openSync(temp, "w", 0o600);
  try {
    writeSync(fd, `${lines.join("\n")}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(temp, 0o600);
  renameSync(temp, file);
  return file;
}
