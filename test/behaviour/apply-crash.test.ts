import { describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listJournal } from "../../core/apply/journal.ts";
import { findInterruptedApplies, finishInterrupted, rollbackInterrupted } from "../../core/apply/recovery.ts";
import { tempDir, writeTree } from "../support/temp.ts";

/** A temporary directory by its real path (removed after the run), as the journal records real paths. */
function scratch(prefix: string): string {
  return realpathSync(tempDir(prefix));
}

const CHILD = join(join(import.meta.dir, ".."), "fixtures", "apply-child.ts");
const PAUSE_AFTER = 100;

interface Case {
  path: string;
  old: Uint8Array | null;
  new: Uint8Array | null;
}

/** 200 files: 150 modified (text, CRLF, binary), 30 created in new directories, 20 deleted. */
function cases(): Case[] {
  const enc = (s: string) => new TextEncoder().encode(s);
  const out: Case[] = [];
  for (let i = 0; i < 150; i++) {
    const path = `src/m${String(i).padStart(3, "0")}.txt`;
    if (i % 10 === 0)
      out.push({ path, old: new Uint8Array([0, i, 255, 0, 1]), new: new Uint8Array([0, i, 254, 0, 2, 3]) });
    else if (i % 10 === 1) out.push({ path, old: enc(`old ${i}\r\nline\r\n`), new: enc(`new ${i}\r\nline\r\n`) });
    else out.push({ path, old: enc(`old ${i}\n`.repeat(20)), new: enc(`new ${i}\n`.repeat(21)) });
  }
  for (let i = 0; i < 30; i++)
    out.push({ path: `new/d${i % 3}/c${i}.txt`, old: null, new: new TextEncoder().encode(`created ${i}\n`) });
  for (let i = 0; i < 20; i++)
    out.push({ path: `del/d${i}.txt`, old: new TextEncoder().encode(`doomed ${i}\n`), new: null });
  return out;
}

/** A workspace holding the old contents, then a child applying the new ones, killed with SIGKILL after PAUSE_AFTER files. */
async function killMidApply() {
  const base = scratch("pencil-crash-");
  const root = join(base, "ws");
  const journalDir = join(base, "journal");
  mkdirSync(root);
  const all = cases();
  writeTree(root, Object.fromEntries(all.filter((c) => c.old).map((c) => [c.path, c.old!])));
  const specFile = join(base, "spec.json");
  writeFileSync(
    specFile,
    JSON.stringify({
      root,
      journalDir,
      files: all.map((c) => ({ path: c.path, after: c.new ? Buffer.from(c.new).toString("base64") : null })),
    }),
  );

  const child = spawn(process.execPath, [CHILD, specFile], {
    env: { ...process.env, PAUSE_AFTER: String(PAUSE_AFTER) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`child never paused; stdout=${stdout} stderr=${stderr}`)),
        15_000,
      );
      child.stdout.on("data", (d) => {
        stdout += d;
        if (stdout.includes("paused")) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on("exit", () => reject(new Error(`child exited before pausing; stdout=${stdout} stderr=${stderr}`)));
    });
  } finally {
    child.kill("SIGKILL");
  }
  expect(await exited).toBe("SIGKILL");
  return { root, journalDir, all };
}

/** Where each file stands on disk: byte-for-byte its old content, its new content, or neither. */
function states(root: string, all: Case[]): Record<"old" | "new" | "neither", string[]> {
  const out = { old: [] as string[], new: [] as string[], neither: [] as string[] };
  for (const c of all) {
    const real = join(root, c.path);
    const disk = existsSync(real) ? new Uint8Array(readFileSync(real)) : null;
    const same = (want: Uint8Array | null) =>
      want === null ? disk === null : disk !== null && Buffer.compare(disk, want) === 0;
    out[same(c.new) ? "new" : same(c.old) ? "old" : "neither"].push(c.path);
  }
  return out;
}

/** Temporary files of atomic writes anywhere under `dir`. */
function tempFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter(
    (p) => p.includes(".pencil-") && p.endsWith(".tmp"),
  );
}

describe("kill -9 mid-apply", () => {
  test("every file is old or new; recovery reports the entry and finishing makes all 200 new", async () => {
    const { root, journalDir, all } = await killMidApply();
    const before = states(root, all);
    expect(before.neither).toEqual([]);
    expect(before.new.length).toBe(PAUSE_AFTER);
    expect(before.old.length).toBe(200 - PAUSE_AFTER);
    expect(tempFiles(root)).toEqual([]);
    // A kill between a temp file's creation and its rename leaves this behind.
    writeFileSync(join(root, "src", ".m140.txt.pencil-0badf00d.tmp"), "half written");

    const [interrupted, ...more] = findInterruptedApplies(journalDir);
    expect(more).toEqual([]);
    expect(interrupted!.counts).toEqual({ old: 200 - PAUSE_AFTER, new: PAUSE_AFTER, other: 0 });
    expect(
      interrupted!.files
        .filter((f) => f.state === "new")
        .map((f) => f.path)
        .sort(),
    ).toEqual(before.new.sort());
    expect(interrupted!.leftovers).toEqual([join(root, "src", ".m140.txt.pencil-0badf00d.tmp")]);
    expect(interrupted!.message).toMatch(
      /100 of 200 files have the new content, 100 still the old one\. Finish it .* or roll it back/,
    );

    const result = finishInterrupted(journalDir, interrupted!.applyId);
    expect(result.state).toBe("applied");
    expect(result.written.length).toBe(200 - PAUSE_AFTER);
    expect(result.alreadyDone.length).toBe(PAUSE_AFTER);
    const after = states(root, all);
    expect(after.new.length).toBe(200);
    expect(tempFiles(root)).toEqual([]);
    expect(findInterruptedApplies(journalDir)).toEqual([]);
    expect(listJournal(journalDir)[0]!.state).toBe("applied");
  });

  test("rolling back brings all 200 files back to their old content and removes created directories", async () => {
    const { root, journalDir, all } = await killMidApply();
    const [interrupted] = findInterruptedApplies(journalDir);
    const result = rollbackInterrupted(journalDir, interrupted!.applyId);
    expect(result.state).toBe("rolled-back");
    expect(result.written.length).toBe(PAUSE_AFTER);
    expect(states(root, all).old.length).toBe(200);
    expect(existsSync(join(root, "new"))).toBe(false);
    expect(listJournal(journalDir)[0]!.state).toBe("rolled-back");
    expect(() => rollbackInterrupted(journalDir, interrupted!.applyId)).toThrow(/rolled-back, not interrupted/);
  });

  test("a file someone changed after the crash is `other`, and finishing leaves it alone", async () => {
    const { root, journalDir, all } = await killMidApply();
    writeFileSync(join(root, "src/m149.txt"), "someone else\n"); // still old at the kill
    const [interrupted] = findInterruptedApplies(journalDir);
    expect(interrupted!.counts).toEqual({ old: 200 - PAUSE_AFTER - 1, new: PAUSE_AFTER, other: 1 });
    expect(interrupted!.message).toMatch(/1 were changed by someone else since/);
    const result = finishInterrupted(journalDir, interrupted!.applyId);
    expect(result.refused.map((r) => r.path)).toEqual(["src/m149.txt"]);
    expect(readFileSync(join(root, "src/m149.txt"), "utf8")).toBe("someone else\n");
    const after = states(root, all);
    expect(after.new.length).toBe(199);
    expect(after.neither).toEqual(["src/m149.txt"]);
  });
});
