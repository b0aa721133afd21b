import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** The environment as Pencil reads it (process.env, or a test's own). */
export type Env = Readonly<Record<string, string | undefined>>;

/** Where Pencil keeps its state for this environment. */
export function pencilHomeOf(env: Env): string {
  return resolve(env.PENCIL_HOME && env.PENCIL_HOME.trim() !== "" ? env.PENCIL_HOME : join(homedir(), ".pencil"));
}
