import { closeSync, constants, existsSync, openSync } from "node:fs";

/** Linux: a directory opened by descriptor is named through /proc, so no path component is resolved twice. */
const FD_PATHS = process.platform === "linux" && existsSync("/proc/self/fd");
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * Opens `path` as a directory without following a link at its end and calls
 * `fn` with a path that names exactly that directory (through
 * /proc/self/fd on Linux, so a parent swapped for a link later changes
 * nothing); false when it is not a directory (a link, a file, gone).
 */
export function inDir(path: string, fn: (at: string, fd: number) => void): boolean {
  let fd: number;
  try {
    fd = openSync(path, DIR_FLAGS);
  } catch {
    // Not enterable (gone, chmod 000, not a directory): false, which every caller reports.
    return false;
  }
  try {
    fn(FD_PATHS ? `/proc/self/fd/${fd}` : path, fd);
  } finally {
    closeSync(fd);
  }
  return true;
}
