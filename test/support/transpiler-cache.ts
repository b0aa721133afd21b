import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The variable that tells Bun where to keep the sources it has transpiled, for the next process to reuse. */
const CACHE_VARIABLE = "BUN_RUNTIME_TRANSPILER_CACHE_PATH";

/**
 * Makes Bun's transpiler cache one directory for every Bun process of the test run (preloaded once): by default Bun
 * keeps it below $HOME, and each Pencil process a test starts has a fresh temporary home, so each would transpile
 * Pencil's sources and its libraries again from nothing. The cache is keyed by each file's content and Bun's version,
 * so a stale entry is never used; an owner's own setting of the variable is kept.
 */
export function shareTranspilerCache(): void {
  if (process.env[CACHE_VARIABLE]) return;
  const dir = join(tmpdir(), `pencil-test-transpiled-${process.getuid?.() ?? "user"}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  process.env[CACHE_VARIABLE] = dir;
}

/** `env` for a Pencil process a test starts, with the run's shared transpiler cache (see shareTranspilerCache). */
export function withTranspilerCache(env: Record<string, string>): Record<string, string> {
  const dir = process.env[CACHE_VARIABLE];
  return dir && !(CACHE_VARIABLE in env) ? { ...env, [CACHE_VARIABLE]: dir } : env;
}
