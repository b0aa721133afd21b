// The write cap where the scratch is kept in memory: a tmpfs /tmp (the default of several distributions) sends no
// write to a block device, so /proc/<pid>/io's write_bytes stays near 0 however much a command writes there.
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { memoryFsGrowth } from "../../../core/sandbox/memory-fs-growth.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { tempDir } from "../../support/temp.ts";

const CHECKOUT = join(import.meta.dir, "..", "..", "..");
const TMPFS_MAGIC = 0x01021994;
const shmIsTmpfs = (() => {
  try {
    return statfsSync("/dev/shm").type === TMPFS_MAGIC;
  } catch {
    return false;
  }
})();

describe("memoryFsGrowth", () => {
  test("a directory on disk has none to watch", () => {
    const dir = tempDir("pencil-growth-disk-");
    if (statfsSync(dir).type === TMPFS_MAGIC) throw new Error(`the test's temporary folder ${dir} is on a tmpfs`);
    expect(memoryFsGrowth(dir)).toBeNull();
    expect(memoryFsGrowth(join(dir, "missing"))).toBeNull();
  });

  test.skipIf(!shmIsTmpfs)("on a tmpfs it counts what was written since it started", () => {
    const dir = join("/dev/shm", `pencil-growth-${process.pid}`);
    mkdirSync(dir);
    try {
      const grown = memoryFsGrowth(dir)!;
      expect(grown).not.toBeNull();
      writeFileSync(join(dir, "a.bin"), Buffer.alloc(2 * 1024 * 1024, 1));
      expect(grown()).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    } finally {
      spawnSync("rm", ["-rf", dir]);
    }
  });
});

/** Runs one command that writes 100 files of 100 KB under a 1 MB cap, with the scratch on a fresh tmpfs. */
function program(sandbox: string): string {
  return `
import { createRunCommandTool } from ${JSON.stringify(join(CHECKOUT, "tools/run-command.ts"))};
import { toolContext } from ${JSON.stringify(join(CHECKOUT, "test/support/tool-context.ts"))};
import { statfsSync } from "node:fs";
const [dir, mem] = process.argv.slice(-2);
const t = toolContext(dir + "/ws", { home: dir + "/home", limits: { scratchWriteBytes: 1024 * 1024 } });
const tool = createRunCommandTool({ sandbox: ${JSON.stringify(sandbox)}, scratchParent: mem, realHome: dir + "/home", pencilHome: dir + "/ph", parentEnv: { PATH: "/usr/bin:/bin" } });
const text = await t.run(tool, { command: "for i in $(seq 1 100); do head -c 100000 /dev/zero > f$i.bin; done; sleep 30; echo SURVIVED" });
await tool.close();
console.log(JSON.stringify({ text, tmpfs: statfsSync(mem).type === ${TMPFS_MAGIC} }));
`;
}

/** program(sandbox) in a user and mount namespace of its own, with a tmpfs mounted where the scratch goes. */
function runOnTmpfs(sandbox: string): { text: string; tmpfs: boolean } {
  const dir = tempDir("pencil-growth-cap-");
  for (const d of ["ws", "home", "mem"]) mkdirSync(join(dir, d));
  const mem = join(dir, "mem");
  const r = spawnSync(
    "unshare",
    [
      "--user",
      "--map-root-user",
      "--mount",
      "sh",
      "-c",
      'mount -t tmpfs -o size=64m pencil-test "$1" && shift && exec "$@"',
      "sh",
      mem,
      process.execPath,
      "-e",
      program(sandbox),
      dir,
      mem,
    ],
    { encoding: "utf8", timeout: 60_000 },
  );
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!);
}

describe("the write cap with the scratch in memory", () => {
  for (const sandbox of ["namespace", "plain"])
    test.skipIf(!sandboxAvailable())(`${sandbox}: many files past the cap in all, and the command is killed`, () => {
      const got = runOnTmpfs(sandbox);
      expect(got.tmpfs).toBe(true);
      expect(got.text).toContain("it wrote more than 1.0 MB to files, the cap on what one command may write");
      expect(got.text).toContain("nothing was staged");
      // Past the echoed command line: the command never got to its end.
      expect(got.text.split("\n").slice(1).join("\n")).not.toContain("SURVIVED");
    });
});
