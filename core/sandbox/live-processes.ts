import { readdirSync, readFileSync } from "node:fs";

/**
 * The process trees this Pencil started and that must not outlive it: each sandboxed command's runner (unshare,
 * whose pid namespace holds the command and everything it started) and each MCP server's launcher. A stopped
 * Pencil ends them all (endTrackedProcesses) before it removes their scratch and exits.
 */
const live = new Set<number>();

/** Tracks the process tree under `pid` until the returned function is called (when it has exited). */
export function trackProcess(pid: number): () => void {
  live.add(pid);
  return () => live.delete(pid);
}

/**
 * Kills (SIGKILL) every tracked process, its process group when it leads one, and every process below it, then
 * waits at most `waitMs` until none of them runs any more (a zombie runs nothing). Synchronous: it is called from a
 * signal handler on the way out, and what it killed must be gone before their scratch is removed. Returns the
 * number of processes it killed.
 */
export function endTrackedProcesses(waitMs = 2000): number {
  const all = new Set<number>();
  // Found before any kill: a killed parent's children are reparented and could no longer be found under it.
  for (const root of live) for (const pid of processTree(root)) all.add(pid);
  for (const root of live) {
    try {
      process.kill(-root, "SIGKILL");
    } catch {
      // not a group leader, or gone: its tree is killed one by one below
    }
  }
  for (const pid of all) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline && [...all].some(running)) Bun.sleepSync(5);
  live.clear();
  return all.size;
}

/** `root` and every process below it, as /proc lists their children. */
export function processTree(root: number): number[] {
  const out: number[] = [];
  const stack = [root];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    out.push(pid);
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const kids = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
        if (kids) for (const k of kids.split(" ")) stack.push(Number(k));
      }
    } catch {
      // gone meanwhile, or not Linux: what was found is killed
    }
  }
  return out;
}

/** True while `pid` exists and is not a zombie. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    // No such process (or not ours to read): not running.
    return false;
  }
}
