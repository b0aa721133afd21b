import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { pencilHomeOf, type Env } from "../../core/pencil-home.ts";
import { notePencilConfig } from "../../core/sandbox/command-env.ts";

/** The configuration files this process read, for doctor to name: Bun's `.env` files where it started, and the user's `$PENCIL_HOME/.env`. */
export interface ConfigSources {
  /** Files Bun loaded before Pencil ran (in Pencil's own directory when started by the launcher). */
  bun: string[];
  /** Files Bun would have loaded there but that do not exist. */
  bunMissing: string[];
  /** The user's config file and whether it was there. */
  user: { path: string; read: boolean; error?: string };
}

/**
 * The `.env` files Bun reads in the directory it starts in: `.env`, `.env.<NODE_ENV or development>`, and `.env.local`
 * except under test; none for a null `startDir` (the single executable reads no `.env`).
 */
function bunEnvFiles(startDir: string | null, env: Env): string[] {
  if (startDir === null) return [];
  const mode = env.NODE_ENV || "development";
  return [".env", `.env.${mode}`, ...(mode === "test" ? [] : [".env.local"])].map((name) => join(startDir, name));
}

/**
 * Reads `$PENCIL_HOME/.env` into `env` for every variable not already set (the real
 * environment and Pencil's own `.env` win). `PENCIL_HOME` itself is never taken from
 * it: the file cannot move the directory it lives in. A workspace's `.env` is never read.
 */
export function loadConfig(env: Env, startDir: string | null): ConfigSources {
  const candidates = bunEnvFiles(startDir, env);
  const user = join(pencilHomeOf(env), ".env");
  const sources: ConfigSources = {
    bun: candidates.filter((f) => existsSync(f)),
    bunMissing: candidates.filter((f) => !existsSync(f)),
    user: { path: user, read: false },
  };
  // What these files define is Pencil's configuration, not the owner's shell's: commands never get it.
  for (const file of sources.bun) notePencilConfig(envNames(file));
  let text: string;
  try {
    text = readFileSync(user, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") sources.user.error = (error as Error).message;
    return sources;
  }
  sources.user.read = true;
  let values: Record<string, string>;
  try {
    values = parseEnv(text) as Record<string, string>;
  } catch (error) {
    sources.user.error = `not a .env file (${(error as Error).message})`;
    return sources;
  }
  notePencilConfig(Object.keys(values));
  for (const [key, value] of Object.entries(values)) {
    if (key === "PENCIL_HOME" || (env[key] !== undefined && env[key] !== "")) continue;
    (env as Record<string, string | undefined>)[key] = value;
  }
  return sources;
}

/** The names a `.env` file defines; none when it cannot be read or parsed. */
function envNames(file: string): string[] {
  try {
    return Object.keys(parseEnv(readFileSync(file, "utf8")));
  } catch {
    return [];
  }
}
