import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { readSmallFile, smallFileBytes } from "../../core/read-small-file.ts";
import { tempDir, writeTree } from "../support/temp.ts";

// The one bounded reader of the mount plan's version files, a command's changed files and the settings a command is
// shown: a regular file of at most the limit, never through a link, never blocking on a FIFO.

test("a regular file within the limit is read whole, with its stat; a BOM and bytes are kept as they are", () => {
  const dir = tempDir();
  writeTree(dir, { "a.txt": "\uFEFFhello" });
  const read = readSmallFile(join(dir, "a.txt"), 8);
  expect("bytes" in read && read.bytes.toString("utf8")).toBe("\uFEFFhello");
  expect("bytes" in read && read.stat.isFile()).toBe(true);
  expect(smallFileBytes(join(dir, "a.txt"), 8)?.toString("utf8")).toBe("\uFEFFhello");
});

test("a file over the limit, a link (even to a small file), a directory, a FIFO and a missing path are not read", () => {
  const dir = tempDir();
  writeTree(dir, { "big.txt": "123456789", "small.txt": "ok", "sub/x": "" });
  symlinkSync(join(dir, "small.txt"), join(dir, "link.txt"));
  expect(spawnSync("mkfifo", [join(dir, "fifo")]).status).toBe(0);
  expect(readSmallFile(join(dir, "big.txt"), 8)).toMatchObject({ refused: "too-large" });
  expect(readSmallFile(join(dir, "link.txt"), 8)).toEqual({ failed: "ELOOP" });
  expect(readSmallFile(join(dir, "sub"), 8)).toMatchObject({ refused: "not-a-file" });
  expect(readSmallFile(join(dir, "fifo"), 8)).toMatchObject({ refused: "not-a-file" });
  expect(readSmallFile(join(dir, "none"), 8)).toEqual({ failed: "ENOENT" });
  for (const name of ["big.txt", "link.txt", "sub", "fifo", "none"])
    expect(smallFileBytes(join(dir, name), 8)).toBeNull();
});
