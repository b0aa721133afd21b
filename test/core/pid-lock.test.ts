import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { acquireBrainLock } from "../../brain/brain-lock.ts";
import { pidLockHeld, readPidLock, releasePidLock, takePidLockAsync, thisProcess } from "../../core/pid-lock.ts";
import { processAlive } from "../../core/process-alive.ts";
import { tempDir } from "../support/temp.ts";

const DEAD_PID = 2 ** 22 + 12345;

describe("the one pid lock (workspace and brain)", () => {
  test("processAlive: this process and its parent are alive, a pid past the kernel's limit is not", () => {
    expect(processAlive(process.pid)).toBe(true);
    expect(processAlive(process.ppid)).toBe(true);
    expect(processAlive(DEAD_PID)).toBe(false);
  });

  test("the brain's lock names its holder like the workspace's, and a lock left by a dead process (old plain-pid format too) is taken over", async () => {
    const dir = tempDir();
    const file = join(dir, "brain.lock");
    writeFileSync(file, String(DEAD_PID));
    const release = await acquireBrainLock(file, 100);
    const seen = readPidLock(file);
    expect(seen?.holder?.pid).toBe(process.pid);
    expect(seen?.holder?.host).toBe(thisProcess().host);
    expect(pidLockHeld(file)).toBe(true);
    await expect(acquireBrainLock(file, 100)).rejects.toThrow(
      `The brain is in use by another Pencil process (pid ${process.pid}, lock ${file})`,
    );
    release();
    expect(existsSync(file)).toBe(false);

    writeFileSync(file, JSON.stringify({ ...thisProcess(), pid: DEAD_PID }));
    const again = await acquireBrainLock(file, 100);
    expect(readPidLock(file)?.holder?.pid).toBe(process.pid);
    again();
  });

  test("an async wait takes the lock as soon as its live holder lets go; a release that is no longer ours removes nothing", async () => {
    const file = join(tempDir(), "locks", "x.lock");
    const first = await takePidLockAsync(file, thisProcess(), 0, () => new Error("busy"));
    setTimeout(() => releasePidLock(file, first), 120);
    const second = await takePidLockAsync(file, thisProcess(), 5_000, () => new Error("busy"));
    expect(readFileSync(file, "utf8")).toBe(second);
    releasePidLock(file, "someone else's text\n");
    expect(existsSync(file)).toBe(true);
    releasePidLock(file, second);
    expect(existsSync(file)).toBe(false);
  });
});
