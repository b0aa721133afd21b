import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { applyReviewed } from "../../app/apply-reviewed.ts";
import { createRuntime } from "../../app/runtime.ts";
import { listJournal } from "../../core/apply/journal.ts";
import { makeChangeset } from "../fixtures/apply-changeset.ts";
import { runCli } from "../support/cli.ts";
import { tempDir, writeTree } from "../support/temp.ts";
import { withTranspilerCache } from "../support/transpiler-cache.ts";

const PRELOAD = join(join(import.meta.dir, ".."), "fixtures/fault-preload.ts");
const enc = (s: string) => new TextEncoder().encode(s);
const names = ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f.txt"];

/** An applied changeset of six files, then `pencil undo` killed with -9 after two files, the third one's temp file written but not renamed. */
async function killMidUndo() {
  const root = realpathSync(tempDir("pencil-undo-kill-ws-"));
  writeTree(root, Object.fromEntries(names.map((n) => [n, `old ${n}\n`])));
  const home = tempDir("pencil-undo-kill-home-");
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    PENCIL_HOME: join(home, ".pencil"),
    NO_COLOR: "1",
  };
  const runtime = createRuntime({ env, workspace: root });
  const cs = makeChangeset(
    root,
    names.map((n) => ({ path: n, after: enc(`new ${n}\n`) })),
    "cs-undo",
  );
  runtime.store.save(cs);
  applyReviewed(runtime, cs, names, []);
  const faults = join(home, "faults");
  mkdirSync(faults);
  // atomic-write 1 is the journal entry saying `undoing`; 2 and 3 are the first two files; 4 is paused before its rename.
  const undo = Bun.spawn(
    [process.execPath, "--preload", PRELOAD, join(join(import.meta.dir, ".."), "../index.ts"), "undo", "-w", root],
    {
      cwd: root,
      env: withTranspilerCache({ ...env, PENCIL_FAULT_DIR: faults, PENCIL_FAULT_PAUSE: "atomic-write:4" }),
      stdio: ["ignore", "ignore", "ignore"],
    },
  );
  const deadline = Date.now() + 20_000;
  while (!existsSync(join(faults, "atomic-write-4"))) {
    if (Date.now() > deadline) throw new Error("the undo never paused");
    await Bun.sleep(20);
  }
  undo.kill("SIGKILL");
  await undo.exited;
  const contents = () => names.map((n) => readFileSync(join(root, n), "utf8"));
  const temps = () => readdirSync(root).filter((n) => n.endsWith(".tmp"));
  return { root, env, runtime, contents, temps };
}

test("kill -9 during undo: recover reports the undo with its temp file, and finishing it reverts every file and leaves no temp file", async () => {
  const { root, env, runtime, contents, temps } = await killMidUndo();
  expect(temps()).toHaveLength(1);
  const list = await runCli(["recover", "-w", root], { cwd: root, env });
  expect(list.stdout).toMatch(
    /Undo of apply \S+ \(changeset cs-undo\) was interrupted: 2 of 6 files are back to their old content, 4 still have the applied one/,
  );
  expect(list.stdout).toContain(`temporary file left by the interrupted write: ${join(root, temps()[0]!)}`);
  const id = list.stdout.split(" ")[0]!;
  const finish = await runCli(["recover", "finish", id, "-w", root], { cwd: root, env });
  expect(finish.code).toBe(0);
  expect(finish.stdout).toContain(`Undo of apply ${id}: undone.`);
  expect(contents()).toEqual(names.map((n) => `old ${n}\n`));
  expect(temps()).toEqual([]);
  expect(listJournal(runtime.journalDir)[0]!.state).toBe("undone");
  expect(runtime.store.load("cs-undo").status).toBe("undone");
});

test("an interrupted undo rolled back writes the applied content again; running undo again instead finishes it", async () => {
  const first = await killMidUndo();
  const id = (await runCli(["recover", "-w", first.root], { cwd: first.root, env: first.env })).stdout.split(" ")[0]!;
  const rollback = await runCli(["recover", "rollback", id, "-w", first.root], { cwd: first.root, env: first.env });
  expect(rollback.code).toBe(0);
  expect(first.contents()).toEqual(names.map((n) => `new ${n}\n`));
  expect(first.temps()).toEqual([]);
  expect(listJournal(first.runtime.journalDir)[0]!.state).toBe("applied");

  const second = await killMidUndo();
  const again = await runCli(["undo", "-w", second.root], { cwd: second.root, env: second.env });
  expect(again.code).toBe(0);
  expect(second.contents()).toEqual(names.map((n) => `old ${n}\n`));
  expect(second.temps()).toEqual([]);
  expect(listJournal(second.runtime.journalDir)[0]!.state).toBe("undone");
});
