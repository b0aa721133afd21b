import { afterAll, describe, expect, test } from "bun:test";
import { lstatSync, mkdirSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dirWatcher, newInotifyWatcher } from "../../../core/sandbox/dir-watch.ts";
import { ScanCache, scanBelow } from "../../../core/sandbox/scan-cache.ts";
import { tempDir as sharedTempDir, writeTree } from "../../support/temp.ts";

// A process's first search from the saved index judges each directory by its lstat alone and takes the watches after
// it, between other work (while the command runs): the first command does not wait for 12,000 watches, later searches
// still skip the lstat's, and a change made at any moment around it is found.

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = realpathSync(sharedTempDir("pencil-scan-later-"));
  made.push(dir);
  return dir;
}
const hidden = (p: string) => p.endsWith("/.env");
const sorted = (a: string[]) => [...a].sort();

function watchesWork(): boolean {
  const dir = tempDir();
  return dirWatcher()?.watch(dir, lstatSync(dir, { bigint: true }).dev) != null;
}

/** A toolchain-like tree, its saved index, and a fresh process's cache (a real watcher; stamps trusted at once). */
function indexed() {
  const root = tempDir();
  const index = tempDir();
  const files: Record<string, string> = { "versions/3.1/lib/.env": "A=1\n" };
  for (let i = 0; i < 30; i++) files[`versions/3.1/lib/pkg${i}/sub/mod.py`] = "x\n";
  writeTree(root, files);
  new ScanCache({ watcher: null, racyWindowNs: 0n }).below(root, "k", hidden, 1_000_000, index);
  const dirs = scanBelow(root, hidden).dirsRead;
  return { root, index, dirs, cache: new ScanCache({ watcher: dirWatcher(), racyWindowNs: 0n }) };
}

/** Lets the cache's background work run until a search answers after the root's lstat alone (or `ms` pass). */
async function settled(search: () => { dirsChecked: number }, ms = 5_000): Promise<number> {
  const end = Date.now() + ms;
  let checked = search().dirsChecked;
  while (checked !== 1 && Date.now() < end) {
    await Bun.sleep(5);
    checked = search().dirsChecked;
  }
  return checked;
}

const watching = watchesWork();

describe("(needs inotify watches; skipped when the user's limit is used up by other programs)", () => {
  test.if(watching)(
    "the first search from the index takes no watch; after it, later searches lstat the root alone and answer the same",
    async () => {
      const { root, index, dirs, cache } = indexed();
      const first = cache.below(root, "k", hidden, 1_000_000, index);
      expect(first.dirsRead).toBe(0);
      expect(first.dirsChecked).toBe(dirs);
      expect(sorted(first.denied)).toEqual(sorted(scanBelow(root, hidden).denied));
      // Right after it (no background work could run yet) a search still lstat's every directory.
      expect(cache.below(root, "k", hidden, 1_000_000, index).dirsChecked).toBe(dirs);
      expect(await settled(() => cache.below(root, "k", hidden, 1_000_000, index))).toBe(1);
      const warm = cache.below(root, "k", hidden, 1_000_000, index);
      expect(warm.dirsRead).toBe(0);
      expect(sorted(warm.denied)).toEqual(sorted(first.denied));
    },
  );

  test.if(watching)(
    "a secret added between the search and its watches, or after them, is found by the next search",
    async () => {
      const { root, index, cache } = indexed();
      cache.below(root, "k", hidden, 1_000_000, index);
      // Before the background work takes the watches: the identity compared after each watch has moved.
      writeFileSync(join(root, "versions/3.1/lib/pkg3/sub/.env"), "B=2\n");
      await Bun.sleep(50);
      const second = cache.below(root, "k", hidden, 1_000_000, index);
      expect(second.denied).toContain(join(root, "versions/3.1/lib/pkg3/sub/.env"));
      expect(sorted(second.denied)).toEqual(sorted(scanBelow(root, hidden).denied));
      // After every watch is in place and the result is remembered whole: the events of the watches say so.
      expect(await settled(() => cache.below(root, "k", hidden, 1_000_000, index))).toBe(1);
      writeFileSync(join(root, "versions/3.1/lib/pkg9/.env"), "C=3\n");
      mkdirSync(join(root, "versions/3.1/moved"));
      writeFileSync(join(root, "versions/3.1/moved/.env"), "D=4\n");
      renameSync(join(root, "versions/3.1/moved"), join(root, "versions/3.1/lib/pkg20/moved"));
      const third = cache.below(root, "k", hidden, 1_000_000, index);
      expect(third.denied).toContain(join(root, "versions/3.1/lib/pkg9/.env"));
      expect(third.denied).toContain(join(root, "versions/3.1/lib/pkg20/moved/.env"));
      expect(sorted(third.denied)).toEqual(sorted(scanBelow(root, hidden).denied));
    },
  );

  test.if(watching)("a directory replaced before its watch is taken is read again, not vouched for", async () => {
    const { root, index, cache } = indexed();
    cache.below(root, "k", hidden, 1_000_000, index);
    // Same name, another directory (another inode) holding a secret; the parent's listing is unchanged by name.
    const dir = join(root, "versions/3.1/lib/pkg5");
    renameSync(dir, join(root, "pkg5-old"));
    mkdirSync(dir);
    writeFileSync(join(dir, ".env"), "E=5\n");
    await Bun.sleep(50);
    const next = cache.below(root, "k", hidden, 1_000_000, index);
    expect(next.denied).toContain(join(dir, ".env"));
    expect(sorted(next.denied)).toEqual(sorted(scanBelow(root, hidden).denied));
  });

  test.if(watching)("a refused watch pauses asking for more: one refused call, not one per directory", () => {
    const dir = tempDir();
    const dev = lstatSync(dir, { bigint: true }).dev;
    const watcher = newInotifyWatcher(1_000)!;
    expect(watcher.watch(join(dir, "gone"), dev)).toBeNull(); // refused by the kernel (no such directory)
    // Within the pause nothing is asked of the kernel: null, and a search lstat's the directory instead.
    expect(watcher.watch(dir, dev)).toBeNull();
    const cache = new ScanCache({ watcher, racyWindowNs: 0n });
    writeTree(dir, { "a/.env": "x", "b/c.txt": "y" });
    expect(sorted(cache.below(dir, "k", hidden).denied)).toEqual([join(dir, "a/.env")]);
    writeFileSync(join(dir, "b/.env"), "z");
    expect(sorted(cache.below(dir, "k", hidden).denied)).toEqual([join(dir, "a/.env"), join(dir, "b/.env")]);
  });
});
