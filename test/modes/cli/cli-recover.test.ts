import { expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ChangesetStore } from "../../../core/staging/changeset-store.ts";
import { makeChangeset } from "../../fixtures/apply-changeset.ts";
import { runCli } from "../../support/cli.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

const CHILD = join(join(import.meta.dir, "../.."), "fixtures/apply-child.ts");
const enc = (s: string) => new TextEncoder().encode(s);

/** A changeset of three files whose apply is killed with SIGKILL after the first file. */
async function interruptedApply() {
  const root = realpathSync(tempDir("pencil-recover-ws-"));
  writeTree(root, { "a.txt": "old a\n", "b.txt": "old b\n", "c.txt": "old c\n" });
  const home = tempDir("pencil-recover-home-");
  const pencilHome = join(home, ".pencil");
  const specs = ["a", "b", "c"].map((n) => ({ path: `${n}.txt`, after: enc(`new ${n}\n`) }));
  const cs = makeChangeset(root, specs);
  cs.workspace = root;
  new ChangesetStore(pencilHome).save(cs);
  const specFile = join(home, "spec.json");
  writeFileSync(
    specFile,
    JSON.stringify({
      root,
      journalDir: join(pencilHome, "journal"),
      files: specs.map((s) => ({ path: s.path, after: Buffer.from(s.after).toString("base64") })),
    }),
  );
  const child = spawn(process.execPath, [CHILD, specFile], {
    env: { ...process.env, PAUSE_AFTER: "1" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  await new Promise<void>((resolve) => child.stdout.on("data", (d) => String(d).includes("paused") && resolve()));
  child.kill("SIGKILL");
  await new Promise((resolve) => child.on("exit", resolve));
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, PENCIL_HOME: pencilHome, NO_COLOR: "1" };
  return { root, env, read: (p: string) => readFileSync(join(root, p), "utf8") };
}

test("an apply killed mid-way is reported at the next start, and `recover finish` completes it and records it", async () => {
  const { root, env, read } = await interruptedApply();
  const log = await runCli(["log", "-w", root], { cwd: root, env });
  expect(log.stderr).toMatch(/interrupted apply \S+: .*1 of 3 files have the new content/);
  const id = log.stderr.match(/pencil recover finish (\S+)\)/)![1]!;
  const finish = await runCli(["recover", "finish", id, "-w", root], { cwd: root, env });
  expect(finish.code).toBe(0);
  expect([read("a.txt"), read("b.txt"), read("c.txt")]).toEqual(["new a\n", "new b\n", "new c\n"]);
  const after = JSON.parse((await runCli(["log", "--json", "-w", root], { cwd: root, env })).stdout);
  expect(after[0].status).toBe("applied");
  expect((await runCli(["recover", "-w", root], { cwd: root, env })).stdout).toContain("No interrupted apply or undo.");
});

test("`recover rollback` restores every file and leaves the changeset to review again", async () => {
  const { root, env, read } = await interruptedApply();
  const id = (await runCli(["recover", "-w", root], { cwd: root, env })).stdout.split(" ")[0]!;
  const rollback = await runCli(["recover", "rollback", id, "-w", root], { cwd: root, env });
  expect(rollback.code).toBe(0);
  expect([read("a.txt"), read("b.txt"), read("c.txt")]).toEqual(["old a\n", "old b\n", "old c\n"]);
  const after = JSON.parse((await runCli(["log", "--json", "-w", root], { cwd: root, env })).stdout);
  expect(after[0].status).toBe("pending");
});
