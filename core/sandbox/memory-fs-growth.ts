import { statfsSync } from "node:fs";

/** statfs's type of tmpfs (and of /dev/shm): files kept in memory. */
const TMPFS_MAGIC = 0x01021994;

/**
 * How many bytes the in-memory file system holding `dir` has grown by since this was called, or null when `dir` is on
 * another kind of file system. A command's writes to a tmpfs (a `/tmp` in memory, as several distributions have it)
 * never reach a block device, so /proc/<pid>/io's write_bytes does not count them: the write cap watches the file
 * system's own usage there instead. It counts every writer of that file system, so under another process's heavy
 * writes a command is stopped early rather than late.
 */
export function memoryFsGrowth(dir: string): (() => number) | null {
  const used = () => {
    const s = statfsSync(dir);
    return (s.blocks - s.bfree) * s.bsize;
  };
  let type: number;
  try {
    type = statfsSync(dir).type;
  } catch {
    return null;
  }
  if (type !== TMPFS_MAGIC) return null;
  const start = used();
  return () => {
    try {
      return Math.max(0, used() - start);
    } catch {
      return 0;
    }
  };
}
