import { CheckpointError } from "../core/errors/checkpoint-error.ts";
import { UnknownChangesetError } from "../core/errors/unknown-changeset-error.ts";
import { UnknownSessionError } from "../core/errors/unknown-session-error.ts";
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { Changeset } from "../core/staging/changeset.ts";
import { decide } from "../core/policy/policy.ts";
import { isInside, realPathLoose } from "../core/workspace.ts";
import { LinkGuard, stricter } from "../core/policy/hard-links.ts";
import type { Runtime } from "./runtime.ts";
import { SavedSession } from "./saved-session.ts";
import type { Checkpoint } from "./session-replay.ts";
import { SessionStore } from "./session-store.ts";

/**
 * The session an `ID` names: a session id, or a changeset id (its session), or —
 * with no ID — the workspace's most recently active session.
 */
export function sessionFor(runtime: Runtime, id?: string): SavedSession {
  const store = new SessionStore(runtime.pencilHome);
  if (id === undefined) {
    const latest = store.listFor(runtime.ws.root)[0];
    if (!latest)
      throw new CheckpointError(`No session in ${runtime.ws.root} yet: start one with pencil agent "<goal>".`);
    return SavedSession.open(store, latest.id);
  }
  if (store.has(id)) return SavedSession.open(store, id);
  let cs: Changeset | null = null;
  try {
    cs = runtime.store.load(id);
  } catch (error) {
    // Not a changeset id (or prefix): it is looked up as a session's next. A record that is there but cannot be read
    // is said, not passed over.
    if (!UnknownChangesetError.isInstance(error)) throw error;
    cs = null;
  }
  if (cs?.session && store.has(cs.session)) return SavedSession.open(store, cs.session);
  try {
    return SavedSession.open(store, store.resolveId(id));
  } catch (error) {
    if (!UnknownSessionError.isInstance(error)) throw error;
    const known = store.listFor(runtime.ws.root).map((h) => h.id);
    throw new CheckpointError(
      `No session or changeset ${id}.${known.length ? ` Sessions of this workspace: ${known.join(", ")}.` : ""}`,
    );
  }
}

/** The checkpoints of a session, for `steps`. */
export function listCheckpoints(session: SavedSession): Checkpoint[] {
  return session.checkpoints();
}

/** What a fork wrote. */
export interface ForkResult {
  dir: string;
  /** Workspace-relative paths written (or deleted) from the checkpoint's staged state. */
  staged: string[];
  /** Files of the workspace left out of the copy because Pencil never reads them (secrets). */
  skipped: string[];
}

/**
 * Writes a copy of the workspace with the staged changes up to checkpoint `n` into
 * a new directory, never into the workspace: refused when `dir` is the workspace,
 * inside it, or an existing non-empty directory. Files Pencil may not read (`.env`,
 * keys) are not copied.
 */
export function forkAt(runtime: Runtime, session: SavedSession, n: number, dirArg: string): ForkResult {
  const dir = realPathLoose(resolve(dirArg)).real;
  const root = runtime.ws.root;
  if (dir === root) throw new CheckpointError(`${dirArg} is the workspace itself; fork writes a copy elsewhere.`);
  if (isInside(root, dir))
    throw new CheckpointError(`${dirArg} is inside the workspace ${root}; choose a directory outside it.`);
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new CheckpointError(`${dirArg} exists and is not empty; give a new or empty directory.`);
  let state;
  try {
    state = session.state(n);
  } catch (error) {
    if (error instanceof RangeError) throw new CheckpointError(error.message);
    throw error;
  }
  const skipped: string[] = [];
  // A file with other names is judged by all of them, as run_command's copy judges it: another name of a key file
  // or of a `.env` is not copied (cpSync would copy the secret's content under the innocent name).
  const links = new LinkGuard({ root, home: runtime.ws.home, pencilHome: runtime.pencilHome });
  const judge = (real: string) => decide(runtime.policy, { tool: "fork", access: "read", real });
  mkdirSync(dir, { recursive: true });
  cpSync(root, dir, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (src) => {
      if (src === root) return true;
      const verdict = stricter(judge(src), links.judge(src, "read", judge, { unprovenRead: "allow" }));
      if (verdict.decision === "deny") {
        skipped.push(relative(root, src));
        return false;
      }
      return true;
    },
  });
  const staged: string[] = [];
  for (const entry of session.stagedEntries(state)) {
    if (!isInside(root, entry.real)) continue;
    const rel = relative(root, entry.real);
    const target = join(dir, rel);
    if (entry.after) {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, entry.after.bytes);
      chmodSync(target, entry.after.mode);
    } else {
      rmSync(target, { force: true });
    }
    staged.push(rel);
  }
  return { dir, staged: staged.sort(), skipped };
}
