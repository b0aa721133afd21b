/**
 * Named points inside file operations where a test can pause or fail the process:
 * kill -9 at a chosen moment, a disk that fills up mid-write. Production code only
 * calls `faultPoint`, which does nothing until a handler is installed; only tests
 * install one (in-process, or in a CLI subprocess through the preload
 * test/fixtures/fault-preload.ts). No environment variable is read here.
 *
 * Points: `atomic-write` (a temporary file was written beside its target, not yet
 * renamed over it; detail: the target path), `file-placed` (apply, undo or
 * recovery has put one file in place; detail: its path), `lock-wait` (a process
 * found the workspace lock held by another and starts waiting; detail: the lock file).
 */
export type FaultHandler = (point: string, detail: string) => void;

let handler: FaultHandler | null = null;

/** Installs (or, with null, removes) the handler every fault point calls. Tests only. */
export function setFaultHandler(next: FaultHandler | null): void {
  handler = next;
}

/** Marks a point a test may pause or fail at; a no-op unless a test installed a handler. */
export function faultPoint(point: string, detail = ""): void {
  if (handler !== null) handler(point, detail);
}
