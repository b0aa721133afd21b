import { readFileSync } from "node:fs";

/**
 * True while a process with this pid exists, as signal 0 finds it (EPERM: it exists, owned by another user).
 * The one liveness check behind the pid lock files, interrupted runs and stale scratches.
 */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A process's start time from /proc (field 22 of /proc/PID/stat), or null where there is no /proc. */
export function startTimeOf(pid: number): string | null {
  return procStat(pid)?.[19] ?? null;
}

/** The fields of /proc/PID/stat from field 3 (the state) on, or null where there is no /proc. */
export function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    // No such process (or not readable): null, the caller's 'not that process'.
    return null;
  }
}
