import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { ChangesetStore } from "../../core/staging/changeset-store.ts";
import { listJournal } from "../../core/apply/journal.ts";
import { outcomeLines } from "../../modes/telegram/card-outcome.ts";
import { isStale } from "../../core/pid-lock.ts";
import { startTimeOf } from "../../core/process-alive.ts";
import { lockFileOf, withWorkspaceLock } from "../../core/workspace-lock.ts";
import { makeChangeset } from "../fixtures/apply-changeset.ts";
import { runCli, runCliPty } from "../support/cli.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const PRELOAD = join(join(import.meta.dir, ".."), "fixtures/fault-preload.ts");
const FILES = 6;
const enc = (s: string) => new TextEncoder().encode(s);

/** A workspace of FILES files and a pending changeset rewriting all of them, saved where `pencil review` finds it. */
function pendingWorkspace() {
  const root = realpathSync(tempDir("pencil-lock-ws-"));
  const names = Array.from({ length: FILES }, (_, i) => `f${i}.txt`);
  writeTree(root, Object.fromEntries(names.map((n) => [n, `old ${n}\n`])));
  const home = tempDir("pencil-lock-home-");
  const pencilHome = join(home, ".pencil");
  const cs = makeChangeset(
    root,
    names.map((n) => ({ path: n, after: enc(`new ${n}\n`) })),
    "cs-race",
  );
  new ChangesetStore(pencilHome).save(cs);
  const faults = join(home, "faults");
  mkdirSync(faults);
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    PENCIL_HOME: pencilHome,
    NO_COLOR: "1",
    TERM: "xterm",
    PENCIL_FAULT_DIR: faults,
  };
  const contents = () => names.map((n) => readFileSync(join(root, n), "utf8"));
  return { root, pencilHome, env, faults, names, contents };
}

/** Waits until `check` holds (polling), failing with `what` after 20 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** The keys that approve every file of the review: `a`, then confirm. */
const approveAll = [
  { expect: "[s]teps ", send: "a" },
  { expect: "[y/N]", send: "y" },
];

describe("two front ends approving the same changeset at once", () => {
  test("one applies, the other waits for it and reports the files as already applied: one journal entry, one undo reverts all", async () => {
    const { root, env, faults, names, contents } = pendingWorkspace();
    // The first review stops inside its apply after writing two files.
    const first = runCliPty(["review", "-w", root], {
      cwd: root,
      env: { ...env, PENCIL_FAULT_PAUSE: "file-placed:2" },
      preload: PRELOAD,
      steps: approveAll,
      timeoutMs: 40_000,
    });
    await until(() => existsSync(join(faults, "file-placed-2")), "the first apply to pause");
    // The second review, approving the same files meanwhile, must not write around the first.
    let secondDone = false;
    const second = runCliPty(["review", "-w", root], {
      cwd: root,
      env,
      preload: PRELOAD,
      steps: approveAll,
      timeoutMs: 40_000,
    }).finally(() => (secondDone = true));
    await until(
      () => secondDone || existsSync(join(faults, "lock-wait-1")),
      "the second review to wait for the lock or finish",
    );
    writeFileSync(join(faults, "go"), "");
    const [a, b] = await Promise.all([first, second]);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(a.output).toContain("applied  f5.txt");
    expect(b.output).toContain("already applied f0.txt");
    expect(b.output).not.toMatch(/conflict|interrupted/);
    expect(contents()).toEqual(names.map((n) => `new ${n}\n`));

    const journal = listJournal(join(env.PENCIL_HOME, "journal"));
    expect(journal.map((e) => e.state)).toEqual(["applied"]);
    const log = JSON.parse((await runCli(["log", "--json", "-w", root], { cwd: root, env })).stdout);
    expect(log[0].status).toBe("applied");
    const undo = await runCli(["undo", "-w", root], { cwd: root, env });
    expect(undo.code).toBe(0);
    expect(contents()).toEqual(names.map((n) => `old ${n}\n`));
  }, 60_000);

  test("a review killed with -9 inside its apply leaves no lock behind: the next one is told to recover, and recover finishes", async () => {
    const { root, env, faults, names, contents } = pendingWorkspace();
    let pid = 0;
    const first = runCliPty(["review", "-w", root], {
      cwd: root,
      env: { ...env, PENCIL_FAULT_PAUSE: "file-placed:3" },
      preload: PRELOAD,
      steps: approveAll,
      timeoutMs: 40_000,
      onSpawn: (p) => (pid = p),
    });
    await until(() => existsSync(join(faults, "file-placed-3")), "the first apply to pause");
    const lock = lockFileOf(env.PENCIL_HOME, root);
    expect(existsSync(lock)).toBe(true);
    process.kill(pid, "SIGKILL");
    await first;

    const second = await runCliPty(["review", "-w", root], { cwd: root, env, steps: approveAll, timeoutMs: 40_000 });
    expect(second.code).toBe(1);
    expect(second.output).toMatch(
      /Nothing was applied: Apply \S+ of changeset cs-race was interrupted: 3 of 6 files have the new content/,
    );
    const id = second.output.match(/pencil recover finish (\S+)\)/)![1]!;
    const finish = await runCli(["recover", "finish", id, "-w", root], { cwd: root, env });
    expect(finish.code).toBe(0);
    expect(contents()).toEqual(names.map((n) => `new ${n}\n`));
    expect(existsSync(lock)).toBe(false);
  }, 60_000);
});

test('the phone\'s card says which files another review had already applied, not "Nothing to apply"', () => {
  const lines = outcomeLines({ applyId: null, applied: [], conflicts: [], alreadyApplied: ["src/a.ts"] }, []);
  expect(lines).toEqual(["✅ <b>Already applied</b> by another review: <code>src/a.ts</code>"]);
});

describe("the workspace lock's stale rule", () => {
  const holder = (over: object) => ({
    pid: process.pid,
    start: startTimeOf(process.pid),
    host: hostname(),
    op: "apply",
    workspace: "/w",
    since: "",
    ...over,
  });

  test("a live holder is respected; a dead pid, a reused pid (other start time) or a damaged file is stale", () => {
    expect(isStale(holder({}))).toBe(false);
    expect(isStale(holder({ pid: 2 ** 22 + 12345 }))).toBe(true);
    if (startTimeOf(process.pid) !== null) expect(isStale(holder({ start: "1" }))).toBe(true);
    expect(isStale(null)).toBe(true);
    expect(isStale(holder({ host: "another-host", pid: 2 ** 22 + 12345 }))).toBe(false);
  });

  test.skipIf(startTimeOf(process.pid) === null)(
    "a holder killed but not yet reaped by its parent (a zombie) is stale",
    async () => {
      // The child exits only once the shell has become `sleep 5`, which never reaps it (a shell may reap a child that
      // ended before its exec, and the pid would be gone rather than a zombie).
      // The pid goes through a file, not a pipe: a pipe left open here would be inherited by later tests' commands.
      const pidFile = join(tempDir("pencil-zombie-"), "pid");
      const child = 'while [ "$(cat /proc/$PPID/comm)" != sleep ]; do sleep 0.01; done';
      const parent = Bun.spawn(["sh", "-c", `sh -c '${child}' & echo $! > ${pidFile}; exec sleep 5`], {
        stdio: ["ignore", "ignore", "ignore"],
      });
      await until(
        () => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"),
        "the shell to start its child",
      );
      const zombie = Number(readFileSync(pidFile, "utf8").trim());
      try {
        await until(
          () => readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1]!.startsWith("Z"),
          "the child to become a zombie",
        );
        expect(isStale(holder({ pid: zombie, start: startTimeOf(zombie) }))).toBe(true);
      } finally {
        parent.kill("SIGKILL");
        await parent.exited;
      }
    },
  );

  test("a lock held by a live process makes the next one wait, then fail with the holder and the file named", () => {
    const home = tempDir("pencil-lock-unit-");
    const file = lockFileOf(home, "/w");
    mkdirSync(join(file, ".."), { recursive: true });
    // The parent of this test process is alive and not us: a live holder.
    writeFileSync(file, JSON.stringify(holder({ pid: process.ppid, start: startTimeOf(process.ppid) })));
    expect(() => withWorkspaceLock(home, "/w", "undo", () => "ran", 100)).toThrow(
      new RegExp(`pid ${process.ppid}.*remove ${file.replace(/[.]/g, "\\.")}`),
    );
    // Left by a process killed with -9: taken over at once.
    writeFileSync(file, JSON.stringify(holder({ pid: 2 ** 22 + 12345 })));
    expect(withWorkspaceLock(home, "/w", "undo", () => "ran", 100)).toBe("ran");
    expect(existsSync(file)).toBe(false);
    // Truncated while being written by hand or by a crash of the file system: stale too.
    writeFileSync(file, '{"pid":');
    expect(withWorkspaceLock(home, "/w", "undo", () => "ran", 100)).toBe("ran");
  });
});
