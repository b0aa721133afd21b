import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
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
import { listJournal, readEntry } from "../../../core/apply/journal.ts";
import { undoApply } from "../../../core/apply/undo.ts";
import { makeChangeset, type ChangeSpec } from "../../fixtures/apply-changeset.ts";
import { tempDir, writeTree } from "../../support/temp.ts";
import { UndoError } from "../../../core/errors/undo-error.ts";

/** A temporary directory by its real path (removed after the run), as the journal records real paths. */
function scratch(prefix: string): string {
  return realpathSync(tempDir(prefix));
}

const enc = (s: string) => new TextEncoder().encode(s);
const modeOf = (p: string) => statSync(p).mode & 0o7777;
const bytesOf = (p: string) => new Uint8Array(readFileSync(p));

function setup(files: Record<string, string | Uint8Array>) {
  const base = scratch("pencil-undo-");
  const root = join(base, "ws");
  mkdirSync(root);
  writeTree(root, files);
  return { root, journalDir: join(base, "journal") };
}

function applyAll(root: string, journalDir: string, specs: ChangeSpec[], id = "cs-test") {
  const cs = makeChangeset(root, specs, id);
  const result = applyChangeset({ changeset: cs, approved: cs.files.map((f) => f.path), journalDir });
  expect(result.conflicts).toEqual([]);
  return result.applyId!;
}

describe("undoApply", () => {
  test("restores exact bytes and modes, brings back deleted files, removes created files and directories", () => {
    const binary = new Uint8Array(randomBytes(2048));
    binary[7] = 0;
    const crlf = new Uint8Array([0xef, 0xbb, 0xbf, ...enc("x\r\ny\r\n")]);
    const { root, journalDir } = setup({
      "a.txt": crlf,
      "tool.sh": "echo 1\n",
      "bin.dat": binary,
      "gone.txt": "keep me\n",
    });
    chmodSync(join(root, "tool.sh"), 0o700);
    chmodSync(join(root, "gone.txt"), 0o640);
    const applyId = applyAll(root, journalDir, [
      { path: "a.txt", after: enc("x\ny\n") },
      { path: "tool.sh", after: enc("echo 2\n"), mode: 0o755 },
      { path: "bin.dat", after: new Uint8Array(randomBytes(100)) },
      { path: "gone.txt", after: null },
      { path: "new/deeper/n.txt", after: enc("n\n") },
      { path: "top.txt", after: enc("t\n") },
    ]);
    expect(modeOf(join(root, "tool.sh"))).toBe(0o755);

    const result = undoApply(journalDir, applyId);

    expect(result.state).toBe("undone");
    expect(result.refused).toEqual([]);
    expect(result.reverted.sort()).toEqual(["a.txt", "bin.dat", "gone.txt", "new/deeper/n.txt", "tool.sh", "top.txt"]);
    expect(bytesOf(join(root, "a.txt"))).toEqual(crlf);
    expect(bytesOf(join(root, "bin.dat"))).toEqual(binary);
    expect(readFileSync(join(root, "tool.sh"), "utf8")).toBe("echo 1\n");
    expect(modeOf(join(root, "tool.sh"))).toBe(0o700);
    expect(readFileSync(join(root, "gone.txt"), "utf8")).toBe("keep me\n");
    expect(modeOf(join(root, "gone.txt"))).toBe(0o640);
    expect(existsSync(join(root, "top.txt"))).toBe(false);
    expect(existsSync(join(root, "new"))).toBe(false);
    expect(listJournal(journalDir)[0]!.state).toBe("undone");
  });

  test("a file edited after the apply is refused and kept; the others revert; a retry after fixing it completes", () => {
    const { root, journalDir } = setup({ "a.txt": "a\n", "b.txt": "b\n" });
    const applyId = applyAll(root, journalDir, [
      { path: "a.txt", after: enc("A\n") },
      { path: "b.txt", after: enc("B\n") },
      { path: "c.txt", after: enc("C\n") },
    ]);
    writeFileSync(join(root, "b.txt"), "B plus my edit\n");
    rmSync(join(root, "c.txt"));
    writeFileSync(join(root, "c.txt"), "mine now\n");

    const first = undoApply(journalDir, applyId);

    expect(first.state).toBe("partially-undone");
    expect(first.reverted).toEqual(["a.txt"]);
    expect(first.refused.map((r) => r.path)).toEqual(["b.txt", "c.txt"]);
    expect(first.refused[0]!.reason).toMatch(/edited since the apply; undo refused for this file/);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("B plus my edit\n");
    expect(readFileSync(join(root, "c.txt"), "utf8")).toBe("mine now\n");
    expect(readEntry(journalDir, applyId).refused.map((r) => r.path)).toEqual(["b.txt", "c.txt"]);

    writeFileSync(join(root, "b.txt"), "B\n");
    writeFileSync(join(root, "c.txt"), "C\n");
    const second = undoApply(journalDir, applyId);
    expect(second.state).toBe("undone");
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("b\n");
    expect(existsSync(join(root, "c.txt"))).toBe(false);
  });

  test("the owner's chmod since the apply is kept: undo refuses that file", () => {
    const { root, journalDir } = setup({ "tool.sh": "echo 1\n" });
    chmodSync(join(root, "tool.sh"), 0o644);
    const applyId = applyAll(root, journalDir, [{ path: "tool.sh", after: enc("echo 2\n") }]);
    chmodSync(join(root, "tool.sh"), 0o755);
    const result = undoApply(journalDir, applyId);
    expect(result.refused[0]!.reason).toMatch(/permissions changed since the apply/);
    expect(statSync(join(root, "tool.sh")).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(root, "tool.sh"), "utf8")).toBe("echo 2\n");
  });

  test("a parent swapped for a symbolic link after the apply is refused: undo never writes through it", () => {
    const { root, journalDir } = setup({ "sub/a.txt": "a\n" });
    const applyId = applyAll(root, journalDir, [{ path: "sub/a.txt", after: enc("A\n") }]);
    const elsewhere = join(root, "..", "elsewhere");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "a.txt"), "A\n");
    renameSync(join(root, "sub"), join(root, "sub-moved"));
    symlinkSync(elsewhere, join(root, "sub"));
    const result = undoApply(journalDir, applyId);
    expect(result.reverted).toEqual([]);
    expect(result.refused[0]!.reason).toMatch(/symbolic link/);
    expect(readFileSync(join(elsewhere, "a.txt"), "utf8")).toBe("A\n");
  });

  test("undoing an undone apply is a clear error; an empty journal has nothing to undo; unknown ids are named", () => {
    const { root, journalDir } = setup({ "a.txt": "a\n" });
    expect(() => undoApply(journalDir)).toThrow("Nothing to undo: no applied changeset in the journal.");
    const applyId = applyAll(root, journalDir, [{ path: "a.txt", after: enc("A\n") }]);
    undoApply(journalDir, applyId);
    expect(() => undoApply(journalDir, applyId)).toThrow(/was already undone at .*nothing to do/);
    expect(() => undoApply(journalDir, "cs-test")).toThrow(UndoError);
    expect(() => undoApply(journalDir)).toThrow(/Nothing to undo/);
    expect(() => undoApply(journalDir, "no-such-id")).toThrow(/No apply or changeset with id no-such-id/);
  });

  test("without an id the newest applied entry is undone; a changeset id finds its apply", () => {
    const { root, journalDir } = setup({ "a.txt": "a\n", "b.txt": "b\n" });
    const first = applyAll(root, journalDir, [{ path: "a.txt", after: enc("A\n") }], "cs-one");
    const second = applyAll(root, journalDir, [{ path: "b.txt", after: enc("B\n") }], "cs-two");
    expect(listJournal(journalDir).map((s) => s.applyId)).toEqual([second, first]);

    expect(undoApply(journalDir).applyId).toBe(second);
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("b\n");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("A\n");
    expect(undoApply(journalDir, "cs-one").applyId).toBe(first);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
  });

  test("an undo killed half-way can be re-run: files already back count as reverted", () => {
    const { root, journalDir } = setup({ "a.txt": "a\n", "b.txt": "b\n" });
    const applyId = applyAll(root, journalDir, [
      { path: "a.txt", after: enc("A\n") },
      { path: "b.txt", after: enc("B\n") },
    ]);
    writeFileSync(join(root, "a.txt"), "a\n"); // what the killed undo had already restored
    const result = undoApply(journalDir, applyId);
    expect(result.state).toBe("undone");
    expect(result.reverted.sort()).toEqual(["a.txt", "b.txt"]);
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("b\n");
  });

  test("a damaged journal blob stops the undo before its first write: nothing changes and the entry's directory is named", () => {
    const names = ["a.txt", "b.txt", "c.txt", "d.txt"];
    const { root, journalDir } = setup(Object.fromEntries(names.map((n) => [n, `original ${n}\n`])));
    const applyId = applyAll(
      root,
      journalDir,
      names.map((n) => ({ path: n, after: enc(`applied ${n}\n`) })),
    );
    // The pack holds each file's before then after; damage the last file's before-image only.
    const entry = readEntry(journalDir, applyId);
    const [offset] =
      entry.blobs[entry.files.at(-1)!.before.exists ? (entry.files.at(-1)!.before as { hash: string }).hash : ""]!;
    const pack = join(journalDir, applyId, "blobs.pack");
    const bytes = readFileSync(pack);
    bytes[offset] = bytes[offset]! ^ 0xff;
    writeFileSync(pack, bytes);
    const dir = join(journalDir, applyId);
    expect(() => undoApply(journalDir, applyId)).toThrow(`Move it aside (mv ${dir} ${dir}.damaged)`);
    expect(() => undoApply(journalDir, applyId)).toThrow(/is damaged.*Nothing was changed/);
    for (const n of names) expect(readFileSync(join(root, n), "utf8")).toBe(`applied ${n}\n`);
    expect(readEntry(journalDir, applyId).state).toBe("applied");
    // Moved aside as told, the entry is out of the way.
    renameSync(dir, `${dir}.damaged`);
    expect(listJournal(journalDir)).toEqual([]);
  });
});
