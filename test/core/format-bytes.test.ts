import { expect, test } from "bun:test";
import { formatBytes } from "../../core/format-bytes.ts";

test.each([
  [0, "0 B"],
  [1000, "1000 B"],
  [1024, "1.0 KB"],
  [100_000, "97.7 KB"],
  [256 * 1024, "256 KB"],
  [1024 * 1024 - 1, "1.0 MB"],
  [1024 * 1024, "1.0 MB"],
  [20 * 1024 * 1024, "20.0 MB"],
  [150 * 1024 * 1024, "150 MB"],
  [1024 ** 3, "1.0 GB"],
  [3 * 1024 ** 4, "3.0 TB"],
])("formatBytes(%p) is %p: one style for every size Pencil shows", (n, text) => {
  expect(formatBytes(n)).toBe(text);
});
