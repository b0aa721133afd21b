import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";

/**
 * What readSmallFile found at a path: the bytes of a regular file of at most the limit, with its stat; or, with the
 * stat of what was opened, why it was not read ("not-a-file", "too-large"); or the error code the open or read met.
 */
export type SmallFileRead =
  | { bytes: Buffer; stat: Stats }
  | { refused: "not-a-file" | "too-large"; stat: Stats }
  | { failed: string | undefined };

/**
 * Reads a regular file of at most `maxBytes`, opened without following a link at its last component and without
 * blocking on a FIFO, so what is read is what was judged: a link or special file put there in between is refused.
 */
export function readSmallFile(path: string, maxBytes: number): SmallFileRead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return { failed: (error as NodeJS.ErrnoException).code };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { refused: "not-a-file", stat };
    if (stat.size > maxBytes) return { refused: "too-large", stat };
    const buf = Buffer.alloc(stat.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return { bytes: buf.subarray(0, got), stat };
  } catch (error) {
    return { failed: (error as NodeJS.ErrnoException).code };
  } finally {
    closeSync(fd);
  }
}

/** The bytes readSmallFile read, or null whatever kept it from reading them. */
export function smallFileBytes(path: string, maxBytes: number): Buffer | null {
  const read = readSmallFile(path, maxBytes);
  return "bytes" in read ? read.bytes : null;
}
