import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
const made: string[] = [];

/** Removes every directory tempDir made; test/support/cleanup.ts runs it after all test files. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A fresh temporary directory, removed after the test file. */
export function tempDir(prefix = "pencil-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** tempDir by its real path (no link on the way, as the sandbox and the policy see it), removed with the others. */
export function realTempDir(prefix?: string): string {
  return realpathSync(tempDir(prefix));
}

/** Writes a tree of files (path → content) under `root`, creating parents. */
export function writeTree(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}
