import { expect, test } from "bun:test";
import { readFileSync, realpathSync, truncateSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyReviewed } from "../../app/apply-reviewed.ts";
import { createRuntime } from "../../app/runtime.ts";
import { readEntry } from "../../core/apply/journal.ts";
import { makeChangeset } from "../fixtures/apply-changeset.ts";
import { runCli } from "../support/cli.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const names = ["a.txt", "b.txt", "c.txt", "d.txt"];

function workspace() {
  const root = realpathSync(tempDir("pencil-damaged-ws-"));
  writeTree(root, Object.fromEntries(names.map((n) => [n, `old ${n}\n`])));
  const home = tempDir("pencil-damaged-home-");
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
    "cs-damaged",
  );
  runtime.store.save(cs);
  const contents = () => names.map((n) => readFileSync(join(root, n), "utf8"));
  return { root, env, runtime, cs, contents };
}

/** doctor wraps its lines to the terminal width; the assertions read them joined again. */
const unwrap = (text: string) => text.replace(/\n +/g, " ");

test("a truncated pending changeset is named by review (exit 1, nothing applied) and by doctor", async () => {
  const { root, env, runtime, contents } = workspace();
  const file = join(runtime.store.dir, "cs-damaged.json");
  truncateSync(file, Math.floor(statSync(file).size / 2));
  const review = await runCli(["review", "-w", root], { cwd: root, env });
  expect(review.code).toBe(1);
  expect(review.stderr).toContain(`damaged changeset ${file}: ${file} is not valid JSON`);
  expect(review.stderr).toContain("Move each aside (mv FILE FILE.damaged)");
  expect(review.stdout).not.toContain("No pending changeset");
  expect(contents()).toEqual(names.map((n) => `old ${n}\n`));
  const doctor = await runCli(["doctor", "-w", root], { cwd: root, env });
  expect(unwrap(doctor.stdout)).toMatch(
    new RegExp(`✗ damaged state: 1 file\\(s\\) under .* cannot be read: ${file.replace(/[.]/g, "\\.")}`),
  );
  expect(doctor.code).toBe(2);
});

test("a damaged journal makes undo change nothing and name the directory to move aside; a truncated entry is named by doctor", async () => {
  const { root, env, runtime, cs, contents } = workspace();
  const { applyId } = applyReviewed(runtime, cs, names, []);
  const entry = readEntry(runtime.journalDir, applyId!);
  const last = entry.files.at(-1)!.before as { hash: string };
  const pack = join(runtime.journalDir, applyId!, "blobs.pack");
  const bytes = readFileSync(pack);
  const at = entry.blobs[last.hash]![0];
  bytes[at] = bytes[at]! ^ 0xff;
  writeFileSync(pack, bytes);
  const dir = join(runtime.journalDir, applyId!);
  const undo = await runCli(["undo", "-w", root], { cwd: root, env });
  expect(undo.code).toBe(1);
  expect(undo.stderr).toContain(`Journal entry ${applyId} is damaged`);
  expect(undo.stderr).toContain(`Nothing was changed. Move it aside (mv ${dir} ${dir}.damaged)`);
  expect(contents()).toEqual(names.map((n) => `new ${n}\n`));

  truncateSync(join(dir, "entry.json"), 40);
  const doctor = await runCli(["doctor", "-w", root], { cwd: root, env });
  expect(unwrap(doctor.stdout)).toContain(`${dir} (Journal entry ${join(dir, "entry.json")} is not valid JSON`);
});
