import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { applyChangeset } from "../../../core/apply/apply.ts";
import { listEntries, listJournal, readEntry } from "../../../core/apply/journal.ts";
import { makeChangeset } from "../../fixtures/apply-changeset.ts";
import { tempDir, writeTree } from "../../support/temp.ts";
import { ApplyError } from "../../../core/errors/apply-error.ts";

/** A temporary directory by its real path (removed after the run), as the journal records real paths. */
function scratch(prefix: string): string {
  return realpathSync(tempDir(prefix));
}

const enc = (s: string) => new TextEncoder().encode(s);
const modeOf = (p: string) => statSync(p).mode & 0o7777;

/** A real workspace and a journal directory beside it. */
function setup(files: Record<string, string | Uint8Array>) {
  const base = scratch("pencil-apply-");
  const root = join(base, "ws");
  mkdirSync(root);
  writeTree(root, files);
  return { root, journalDir: join(base, "home", "journal") };
}

describe("applyChangeset", () => {
  test("writes exactly the approved files: parents, modes, deletes, CRLF+BOM and binary bytes", () => {
    const crlfBom = new Uint8Array([0xef, 0xbb, 0xbf, ...enc("one\r\ntwo\r\n")]);
    const binary = new Uint8Array(randomBytes(4096));
    binary[0] = 0;
    binary[100] = 0;
    const { root, journalDir } = setup({
      "a.txt": "a\n",
      "b.txt": "b\n",
      "run.sh": "#!/bin/sh\necho hi\n",
      "gone.txt": "bye\n",
    });
    chmodSync(join(root, "run.sh"), 0o755);
    const cs = makeChangeset(root, [
      { path: "a.txt", after: enc("A\n") },
      { path: "b.txt", after: enc("B\n") },
      { path: "run.sh", after: enc("#!/bin/sh\necho bye\n") },
      { path: "gone.txt", after: null },
      { path: "crlf.txt", after: crlfBom },
      { path: "bin.dat", after: binary },
      { path: "deep/new/dir/c.txt", after: enc("c\n") },
      { path: "secret.key", after: enc("k\n"), mode: 0o600 },
    ]);
    const approved = cs.files.map((f) => f.path).filter((p) => p !== "b.txt");

    const result = applyChangeset({ changeset: cs, approved, journalDir });

    expect(result.conflicts).toEqual([]);
    expect([...result.applied].sort()).toEqual([...approved].sort());
    expect(result.applied.at(-1)).toBe("gone.txt"); // deletes last
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("A\n");
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("b\n");
    expect(readFileSync(join(root, "run.sh"), "utf8")).toBe("#!/bin/sh\necho bye\n");
    expect(modeOf(join(root, "run.sh"))).toBe(0o755);
    expect(modeOf(join(root, "secret.key"))).toBe(0o600);
    expect(existsSync(join(root, "gone.txt"))).toBe(false);
    expect(new Uint8Array(readFileSync(join(root, "crlf.txt")))).toEqual(crlfBom);
    expect(new Uint8Array(readFileSync(join(root, "bin.dat")))).toEqual(binary);
    expect(readFileSync(join(root, "deep/new/dir/c.txt"), "utf8")).toBe("c\n");
    expect(readdirSync(root).filter((n) => n.includes(".pencil-"))).toEqual([]);

    const [summary] = listJournal(journalDir);
    expect(summary!.applyId).toBe(result.applyId!);
    expect(summary!.state).toBe("applied");
    expect(summary!.changesetId).toBe("cs-test");
    expect([...summary!.files].sort()).toEqual([...approved].sort());
    const entry = readEntry(journalDir, result.applyId!);
    expect(entry.createdDirs).toEqual([join(root, "deep"), join(root, "deep/new"), join(root, "deep/new/dir")]);
    expect(entry.files.find((f) => f.path === "run.sh")!.before).toMatchObject({ exists: true, mode: 0o755 });
    expect(entry.files.find((f) => f.path === "crlf.txt")!.before).toEqual({ exists: false });
  });

  test("an approved path the changeset does not list is an error, and nothing is written", () => {
    const { root, journalDir } = setup({ "a.txt": "a\n" });
    const cs = makeChangeset(root, [{ path: "a.txt", after: enc("A\n") }]);
    expect(() => applyChangeset({ changeset: cs, approved: ["a.txt", "nope.txt"], journalDir })).toThrow(
      /Not in changeset cs-test: nope\.txt\. Approve paths exactly/,
    );
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
    expect(existsSync(journalDir)).toBe(false);
  });

  test("content that does not hash to the approved hash is refused before anything is written", () => {
    const { root, journalDir } = setup({ "a.txt": "a\n", "b.txt": "b\n" });
    const cs = makeChangeset(root, [
      { path: "a.txt", after: enc("A\n") },
      { path: "b.txt", after: enc("B\n") },
    ]);
    cs.files[1]!.after!.bytes = enc("tampered\n");
    expect(() => applyChangeset({ changeset: cs, approved: ["a.txt", "b.txt"], journalDir })).toThrow(ApplyError);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("b\n");
  });

  test("files changed on disk since staging are conflicts, not written; the others are applied", () => {
    const { root, journalDir } = setup({
      "edited.txt": "v1\n",
      "removed.txt": "r\n",
      "ok.txt": "ok\n",
      "sub/x.txt": "x\n",
    });
    const cs = makeChangeset(root, [
      { path: "edited.txt", after: enc("agent\n") },
      { path: "removed.txt", after: enc("agent\n") },
      { path: "raced.txt", after: enc("agent\n") },
      { path: "ok.txt", after: enc("OK\n") },
      { path: "sub/y.txt", after: enc("y\n") },
    ]);
    writeFileSync(join(root, "edited.txt"), "human\n");
    rmSync(join(root, "removed.txt"));
    writeFileSync(join(root, "raced.txt"), "human made this\n");
    // A parent swapped for a symlink since staging would send the write elsewhere.
    renameSync(join(root, "sub"), join(root, "sub-real"));
    symlinkSync(join(root, "sub-real"), join(root, "sub"));

    const result = applyChangeset({ changeset: cs, approved: cs.files.map((f) => f.path), journalDir });

    expect(result.applied).toEqual(["ok.txt"]);
    const reasons = Object.fromEntries(result.conflicts.map((c) => [c.path, c.reason]));
    expect(Object.keys(reasons).sort()).toEqual(["edited.txt", "raced.txt", "removed.txt", "sub/y.txt"]);
    expect(reasons["edited.txt"]).toBe("changed on disk since the agent read it; review again or re-run");
    expect(reasons["removed.txt"]).toMatch(/deleted on disk .*review again or re-run/);
    expect(reasons["raced.txt"]).toMatch(/created on disk .*review again or re-run/);
    expect(reasons["sub/y.txt"]).toMatch(/symbolic link.*review again or re-run/);
    expect(readFileSync(join(root, "edited.txt"), "utf8")).toBe("human\n");
    expect(readFileSync(join(root, "raced.txt"), "utf8")).toBe("human made this\n");
    expect(existsSync(join(root, "removed.txt"))).toBe(false);
    expect(existsSync(join(root, "sub-real/y.txt"))).toBe(false);
    expect(readFileSync(join(root, "ok.txt"), "utf8")).toBe("OK\n");
    expect(
      readEntry(journalDir, result.applyId!)
        .conflicts.map((c) => c.path)
        .sort(),
    ).toEqual(Object.keys(reasons).sort());
  });

  test("the owner's chmod since staging is a conflict too: applying would silently undo it", () => {
    const { root, journalDir } = setup({ "secret-ish.txt": "v1\n" });
    chmodSync(join(root, "secret-ish.txt"), 0o644);
    const cs = makeChangeset(root, [{ path: "secret-ish.txt", after: enc("v2\n") }]);
    chmodSync(join(root, "secret-ish.txt"), 0o600);
    const result = applyChangeset({ changeset: cs, approved: ["secret-ish.txt"], journalDir });
    expect(result.applied).toEqual([]);
    expect(result.conflicts[0]!.reason).toMatch(/permissions changed on disk .*644 → 600/);
    expect(modeOf(join(root, "secret-ish.txt"))).toBe(0o600);
    expect(readFileSync(join(root, "secret-ish.txt"), "utf8")).toBe("v1\n");
  });

  test("when every approved file conflicts nothing is journalled and applyId is null", () => {
    const { root, journalDir } = setup({ "a.txt": "a\n" });
    const cs = makeChangeset(root, [{ path: "a.txt", after: enc("A\n") }]);
    writeFileSync(join(root, "a.txt"), "human\n");
    const result = applyChangeset({ changeset: cs, approved: ["a.txt"], journalDir });
    expect(result).toEqual({ applyId: null, applied: [], conflicts: [expect.objectContaining({ path: "a.txt" })] });
    expect(listJournal(journalDir)).toEqual([]);
  });

  test("the journal entry, with every before- and after-content, is on disk as `applying` before the first write", () => {
    const { root, journalDir } = setup({ "a.txt": "a\n", "b.txt": "same\n" });
    const cs = makeChangeset(root, [
      { path: "a.txt", after: enc("same\n") },
      { path: "b.txt", after: null },
      { path: "c.txt", after: enc("same\n") },
    ]);
    const seen: string[] = [];
    applyChangeset({
      changeset: cs,
      approved: ["a.txt", "b.txt", "c.txt"],
      journalDir,
      onFileWritten: (path, index) => {
        const [entry] = listEntries(journalDir);
        seen.push(`${index}:${path}:${entry!.state}`);
        if (index === 0) {
          expect(entry!.files.map((f) => f.path)).toEqual(["a.txt", "c.txt", "b.txt"]);
          // "a\n" and "same\n" once each, though "same\n" is both a before and two afters.
          expect(Object.keys(entry!.blobs).length).toBe(2);
          expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("same\n");
        }
      },
    });
    expect(seen).toEqual(["0:a.txt:applying", "1:c.txt:applying", "2:b.txt:applying"]);
    expect(listEntries(journalDir)[0]!.state).toBe("applied");
  });

  test("a journal that cannot be created is an ApplyError in Pencil's words, before any file is written", () => {
    const root = tempDir();
    writeTree(root, { "a.txt": "old\n" });
    const home = tempDir();
    const journalDir = join(home, "journal");
    writeFileSync(journalDir, "not a directory\n");
    const cs = makeChangeset(root, [{ path: "a.txt", after: new TextEncoder().encode("new\n") }]);
    expect(() => applyChangeset({ changeset: cs, approved: ["a.txt"], journalDir })).toThrow(ApplyError);
    expect(() => applyChangeset({ changeset: cs, approved: ["a.txt"], journalDir })).toThrow(
      new RegExp(
        `^Nothing was applied: the journal entry in ${journalDir} could not be written \\(.*\\)\\. Free some space there`,
      ),
    );
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("old\n");
  });

  test("a failure mid-way restores the files already written and says nothing was applied", () => {
    const { root, journalDir } = setup({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
    const cs = makeChangeset(root, [
      { path: "a.txt", after: enc("A\n") },
      { path: "b.txt", after: enc("B\n") },
      { path: "c.txt", after: null },
      { path: "new/d.txt", after: enc("D\n") },
    ]);
    expect(() =>
      applyChangeset({
        changeset: cs,
        approved: cs.files.map((f) => f.path),
        journalDir,
        onFileWritten: (_path, index) => {
          if (index === 2) throw new Error("disk full");
        },
      }),
    ).toThrow(/disk full.*3 files already written were restored; nothing was applied/);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("b\n");
    expect(readFileSync(join(root, "c.txt"), "utf8")).toBe("c\n");
    expect(existsSync(join(root, "new"))).toBe(false);
    expect(listEntries(journalDir)[0]!.state).toBe("rolled-back");
  });
});
