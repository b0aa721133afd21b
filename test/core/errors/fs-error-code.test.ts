import { expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorCause, isMissing } from "../../../core/errors/fs-error-code.ts";
import { OverlayMissError } from "../../../core/errors/overlay-miss-error.ts";
import { tempDir } from "../../support/temp.ts";

/** The error a real read of `path` throws. */
function readError(path: string): unknown {
  try {
    readFileSync(path);
  } catch (error) {
    return error;
  }
  throw new Error(`reading ${path} did not fail`);
}

test("only a path that is not there is missing: a directory read, a file below a file, or a plain error is not", () => {
  const dir = tempDir("pencil-fs-code-");
  writeFileSync(join(dir, "file"), "x");
  mkdirSync(join(dir, "sub"));
  expect(isMissing(readError(join(dir, "absent")))).toBe(true);
  expect(isMissing(new OverlayMissError("a.txt is not staged"))).toBe(true);
  expect(isMissing(readError(join(dir, "sub")))).toBe(false); // EISDIR
  expect(isMissing(readError(join(dir, "file", "below")))).toBe(false); // ENOTDIR
  expect(isMissing(new Error("ENOENT"))).toBe(false);
  expect(isMissing(null)).toBe(false);
  expect(isMissing(undefined)).toBe(false);
});

test.each<[string, () => unknown, string]>([
  ["a file system error, by its code", () => readError("/nonexistent-pencil-path"), "ENOENT"],
  ["an error without a code, by its message", () => new Error("disk on fire"), "disk on fire"],
  ["a thrown string, as it is", () => "boom", "boom"],
  ["a code that is not a string, by the message", () => Object.assign(new Error("odd"), { code: 5 }), "odd"],
])("errorCause says %s", (_what, make, cause) => {
  expect(errorCause(make())).toBe(cause);
});
