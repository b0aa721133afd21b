import { afterAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ScanCache, scanBelow } from "../../../core/sandbox/scan-cache.ts";
import { tempDir as sharedTempDir, writeTree } from "../../support/temp.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = realpathSync(sharedTempDir("pencil-scan-index-"));
  made.push(dir);
  return dir;
}
const hidden = (p: string) => p.endsWith("/.env");
// Each ScanCache stands for a new process: nothing in memory, only the saved index. No watcher, no racy window, so
// what is compared is the index and the lstat of each directory alone.
const processCache = () => new ScanCache({ watcher: null, racyWindowNs: 0n });

test("a saved search lets a new process check directories instead of reading them, and still finds what changed", () => {
  const root = tempDir();
  const index = tempDir();
  const files: Record<string, string> = { "versions/3.1/lib/.env": "A=1\n" };
  for (let i = 0; i < 40; i++) files[`versions/3.1/lib/pkg${i}/mod.py`] = "x\n";
  writeTree(root, files);
  const first = processCache().below(root, "k", hidden, 1_000_000, index);
  expect(first.denied).toEqual([join(root, "versions/3.1/lib/.env")]);
  expect(readdirSync(index)).toHaveLength(1);

  const second = processCache().below(root, "k", hidden, 1_000_000, index);
  expect(second.denied).toEqual(first.denied);
  expect(second.dirsRead).toBe(0);
  expect(second.dirsChecked).toBe(first.dirsRead);

  // A secret added later is found: its directory's identity moved, so that directory alone is read again.
  writeFileSync(join(root, "versions/3.1/lib/pkg7/.env"), "B=2\n");
  const third = processCache().below(root, "k", hidden, 1_000_000, index);
  expect(third.denied.sort()).toEqual(scanBelow(root, hidden).denied.sort());
  expect(third.denied).toContain(join(root, "versions/3.1/lib/pkg7/.env"));
  expect(third.dirsRead).toBe(1);

  // Another policy (key) never answers from this index; a damaged index is a full search.
  expect(processCache().below(root, "other", hidden, 1_000_000, index).dirsRead).toBe(first.dirsRead);
  for (const f of readdirSync(index)) writeFileSync(join(index, f), "{ damaged");
  const fourth = processCache().below(root, "k", hidden, 1_000_000, index);
  expect(fourth.denied.sort()).toEqual(third.denied.sort());
  expect(fourth.dirsRead).toBe(first.dirsRead);
});

test("an index whose rows do not hold together (a row naming a later parent, a name that is not text) is no index", () => {
  const root = tempDir();
  const index = tempDir();
  writeTree(root, { "a/b/.env": "A=1\n", "a/c/x.py": "x\n" });
  const first = processCache().below(root, "k", hidden, 1_000_000, index);
  const [file] = readdirSync(index);
  const path = join(index, file!);
  const saved = JSON.parse(readFileSync(path, "utf8")) as { dirs: unknown[][] };
  for (const damage of [(rows: unknown[][]) => (rows[1]![0] = 99), (rows: unknown[][]) => (rows[0]![1] = 7)]) {
    const copy = structuredClone(saved);
    damage(copy.dirs);
    writeFileSync(path, JSON.stringify(copy));
    const again = processCache().below(root, "k", hidden, 1_000_000, null);
    const fromDamaged = processCache().below(root, "k", hidden, 1_000_000, index);
    expect(fromDamaged.denied).toEqual(again.denied);
    expect(fromDamaged.dirsRead).toBe(first.dirsRead);
  }
});
