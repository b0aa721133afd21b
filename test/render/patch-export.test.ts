import { describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { buildChangeset, type Changeset } from "../../core/staging/changeset.ts";
import { DiskFileOps } from "../../core/file-ops.ts";
import { Overlay } from "../../core/staging/overlay.ts";
import { openWorkspace } from "../../core/workspace.ts";
import { base85, binaryLiteral, blobId, changesetToPatch, exportPatch, quotePath } from "../../render/patch-export.ts";
import { tempDir, writeTree } from "../support/temp.ts";

// git must not pick up the machine's config (autocrlf, hooks, identity): the tests pin everything.
const gitEnv = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@t",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@t",
};

function git(cwd: string, args: string[], input?: string): { status: number; out: string } {
  const r = spawnSync("git", ["-c", "core.autocrlf=false", ...args], { cwd, env: gitEnv, input, encoding: "utf8" });
  return { status: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

/** A git repo holding `files` (and their modes) committed as the base. */
function repo(files: Record<string, string | Uint8Array>, modes: Record<string, number> = {}): string {
  const root = tempDir("pencil-patch-");
  writeTree(root, files);
  for (const [path, mode] of Object.entries(modes)) chmodSync(join(root, path), mode);
  execFileSync("git", ["init", "-q"], { cwd: root, env: gitEnv });
  execFileSync("git", ["-c", "core.autocrlf=false", "add", "-A"], { cwd: root, env: gitEnv });
  execFileSync("git", ["commit", "-q", "-m", "base"], { cwd: root, env: gitEnv });
  return root;
}

type Step = { write: string; bytes: string | Uint8Array; mode?: number } | { remove: string };

/** A changeset built by the real overlay and builder from staged steps on `root`. */
function stage(root: string, steps: Step[]): Changeset {
  const ws = openWorkspace(root);
  const overlay = new Overlay(new DiskFileOps());
  const origin = { tool: "write_file", callId: "c", model: "test:m", readsBefore: [] };
  for (const s of steps) {
    if ("remove" in s) overlay.remove(join(ws.root, s.remove), { origin });
    else {
      const bytes = typeof s.bytes === "string" ? new TextEncoder().encode(s.bytes) : s.bytes;
      overlay.writeBytes(join(ws.root, s.write), bytes, { origin, ...(s.mode !== undefined ? { mode: s.mode } : {}) });
    }
  }
  return buildChangeset({
    id: "cs-test",
    goal: "test",
    workspace: ws,
    staged: overlay.list(),
    readDisk: (real) => (existsSync(real) ? readFileSync(real) : null),
  });
}

/** Checks and applies `patch` with git, then asserts every path holds exactly the expected bytes (null: absent). */
function applyAndCompare(root: string, patch: string, expected: Record<string, string | Uint8Array | null>): void {
  const check = git(root, ["apply", "--check", "-"], patch);
  // CRs draw git's "trailing whitespace" warning, exactly as for git's own diffs; anything else is a failure.
  expect(
    check.out.replace(
      /^(<stdin>:\d+: trailing whitespace\.\n[^\n]*\n|warning: \d+ lines? adds? whitespace errors?\.\n)/gm,
      "",
    ),
  ).toBe("");
  expect(check.status).toBe(0);
  const apply = git(root, ["apply", "-"], patch);
  expect(apply.status).toBe(0);
  for (const [path, want] of Object.entries(expected)) {
    const full = join(root, path);
    if (want === null) expect(existsSync(full)).toBe(false);
    else expect(Buffer.compare(readFileSync(full), Buffer.from(want))).toBe(0);
  }
  // The patch also reverses cleanly, which proves its preimages are exact.
  expect(git(root, ["apply", "-R", "--check", "-"], patch).status).toBe(0);
}

const isExecutable = (path: string) => (statSync(path).mode & 0o111) !== 0;

describe("changesetToPatch applies with git apply", () => {
  test("modify, create and delete of text files", () => {
    const root = repo({
      "src/a.ts": "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
      "old.txt": "bye\nnow\n",
    });
    const cs = stage(root, [
      { write: "src/a.ts", bytes: "one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n" },
      { write: "docs/new.md", bytes: "# New\n\nbody\n" },
      { remove: "old.txt" },
    ]);
    const patch = changesetToPatch(cs);
    expect(patch).toContain("diff --git a/docs/new.md b/docs/new.md\nnew file mode 100644\n");
    expect(patch).toContain("--- /dev/null\n+++ b/docs/new.md\n");
    expect(patch).toContain("diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n");
    expect(patch).toContain("--- a/old.txt\n+++ /dev/null\n");
    applyAndCompare(root, patch, {
      "src/a.ts": "one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n",
      "docs/new.md": "# New\n\nbody\n",
      "old.txt": null,
    });
  });

  test("mode changes, alone and with content, and a new executable", () => {
    const root = repo(
      { "run.sh": "echo hi\n", "tool.sh": "echo a\n", "was-exec.sh": "x\n" },
      { "run.sh": 0o644, "tool.sh": 0o644, "was-exec.sh": 0o755 },
    );
    const cs = stage(root, [
      { write: "run.sh", bytes: "echo hi\n", mode: 0o755 },
      { write: "tool.sh", bytes: "echo b\n", mode: 0o755 },
      { write: "was-exec.sh", bytes: "x\n", mode: 0o644 },
      { write: "bin/new.sh", bytes: "#!/bin/sh\n", mode: 0o755 },
    ]);
    const patch = changesetToPatch(cs);
    expect(patch).toContain("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n");
    expect(patch).toContain("new file mode 100755");
    applyAndCompare(root, patch, {
      "run.sh": "echo hi\n",
      "tool.sh": "echo b\n",
      "was-exec.sh": "x\n",
      "bin/new.sh": "#!/bin/sh\n",
    });
    expect(isExecutable(join(root, "run.sh"))).toBe(true);
    expect(isExecutable(join(root, "tool.sh"))).toBe(true);
    expect(isExecutable(join(root, "was-exec.sh"))).toBe(false);
    expect(isExecutable(join(root, "bin/new.sh"))).toBe(true);
  });

  test("CRLF, mixed line endings and a BOM keep their bytes", () => {
    const before = "\ufeffline 1\r\nline 2\r\nline 3\r\nlone lf\nline 5\r\n";
    const after = "\ufeffline 1\r\nline TWO\r\nline 3\r\nlone lf\nline 5\r\nadded\r\n";
    const root = repo({ "win.txt": before, "to-crlf.txt": "a\nb\n" });
    const cs = stage(root, [
      { write: "win.txt", bytes: after },
      { write: "to-crlf.txt", bytes: "a\r\nb\r\n" },
      { write: "new-crlf.txt", bytes: "x\r\ny\r\n" },
    ]);
    const patch = changesetToPatch(cs);
    expect(patch).toContain("+line TWO\r\n");
    applyAndCompare(root, patch, { "win.txt": after, "to-crlf.txt": "a\r\nb\r\n", "new-crlf.txt": "x\r\ny\r\n" });
  });

  test("a missing final newline, removed, added and kept", () => {
    const root = repo({ "gains.txt": "a\nb", "loses.txt": "a\nb\n", "keeps.txt": "a\nb\nc" });
    const cs = stage(root, [
      { write: "gains.txt", bytes: "a\nb\n" },
      { write: "loses.txt", bytes: "a\nB" },
      { write: "keeps.txt", bytes: "a\nb\nC" },
      { write: "fresh.txt", bytes: "no newline" },
    ]);
    const patch = changesetToPatch(cs);
    expect(patch).toContain("\\ No newline at end of file\n");
    applyAndCompare(root, patch, {
      "gains.txt": "a\nb\n",
      "loses.txt": "a\nB",
      "keeps.txt": "a\nb\nC",
      "fresh.txt": "no newline",
    });
  });

  test("binary files are recreated byte-identical from GIT binary patch literals", () => {
    const oldBin = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, ...randomBytes(300)]);
    const newBin = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 9, ...randomBytes(1000)]);
    const created = new Uint8Array(randomBytes(53)); // 53 bytes: more than one 52-byte line, a padded last group
    const root = repo({ "img.png": oldBin, "gone.bin": new Uint8Array([0, 0, 0, 7]), "text-to-bin.dat": "was text\n" });
    const cs = stage(root, [
      { write: "img.png", bytes: newBin },
      { write: "raw/new.bin", bytes: new Uint8Array([0, ...created]) },
      { remove: "gone.bin" },
      { write: "text-to-bin.dat", bytes: new Uint8Array([0, 255, 0]) },
    ]);
    const patch = changesetToPatch(cs);
    expect(patch).toContain("GIT binary patch\nliteral 1006\n");
    applyAndCompare(root, patch, {
      "img.png": newBin,
      "raw/new.bin": new Uint8Array([0, ...created]),
      "gone.bin": null,
      "text-to-bin.dat": new Uint8Array([0, 255, 0]),
    });
  });

  test("empty files, spaces and non-ASCII in paths, and the files filter", () => {
    const root = repo({
      "dir with space/a b.txt": "x\n",
      "empty-then-full.txt": "",
      "ünï.txt": "alt\n",
      "other.txt": "1\n",
    });
    const cs = stage(root, [
      { write: "dir with space/a b.txt", bytes: "y\n" },
      { write: "empty-then-full.txt", bytes: "now\n" },
      { write: "ünï.txt", bytes: "neu\n" },
      { write: "empty.txt", bytes: "" },
      { write: "other.txt", bytes: "2\n" },
    ]);
    const all = cs.files.map((f) => f.path).filter((p) => p !== "other.txt");
    const patch = changesetToPatch(cs, all);
    expect(patch).not.toContain("other.txt");
    expect(patch).toContain('"a/\\303\\274n\\303\\257.txt"');
    applyAndCompare(root, patch, {
      "dir with space/a b.txt": "y\n",
      "empty-then-full.txt": "now\n",
      "ünï.txt": "neu\n",
      "empty.txt": "",
      "other.txt": "1\n",
    });
    expect(() => changesetToPatch(cs, ["nope.txt"])).toThrow(/no file "nope.txt".*other\.txt/);
  });

  test("a file whose base is unknown is skipped with a comment, and the rest still applies", () => {
    const root = repo({ "a.txt": "a\n", "b.txt": "b\n" });
    const cs = stage(root, [
      { write: "a.txt", bytes: "A\n" },
      { write: "b.txt", bytes: "B\n" },
    ]);
    delete cs.files.find((f) => f.path === "b.txt")!.before;
    cs.files.push({ ...cs.files[0]!, path: "/etc/outside.txt" });
    const result = exportPatch(cs);
    expect(result.skipped.map((s) => s.path)).toEqual(["b.txt", "/etc/outside.txt"]);
    expect(
      result.patch.startsWith(
        "# pencil changeset cs-test: 2 file(s) not in this patch\n#   b.txt: its base content is not known",
      ),
    ).toBe(true);
    expect(result.patch).toContain("#   /etc/outside.txt: outside the workspace");
    applyAndCompare(root, result.patch, { "a.txt": "A\n", "b.txt": "b\n" });
  });

  test("a diff that takes too long becomes one whole-file hunk that still applies", () => {
    const lines = (n: number) => Array.from({ length: n }, () => randomBytes(8).toString("hex")).join("\n") + "\n";
    const before = lines(300).replaceAll("\n", "\r\n");
    const after = lines(300).slice(0, -1); // no final newline
    const root = repo({ "big.txt": before });
    const cs = stage(root, [{ write: "big.txt", bytes: after }]);
    const patch = exportPatch(cs, { timeoutMs: 0 }).patch;
    expect(patch).toContain("@@ -1,300 +1,300 @@");
    applyAndCompare(root, patch, { "big.txt": after });
  });
});

describe("git binary encoding", () => {
  test("base85 and literal lines match git's own encoding", () => {
    expect(base85(new Uint8Array([0, 0, 0, 0]))).toBe("00000");
    // 0x00000001 is the last digit only; a short group is zero-padded on the right, as git does.
    expect(base85(new Uint8Array([0, 0, 0, 1]))).toBe("00001");
    expect(base85(new Uint8Array([0, 0, 1]))).toBe(base85(new Uint8Array([0, 0, 1, 0])));
    expect(binaryLiteral(new Uint8Array(3)).startsWith("literal 3\n")).toBe(true);
    const bytes = new Uint8Array(randomBytes(200));
    const encoded = binaryLiteral(bytes).split("\n").slice(1).filter(Boolean);
    expect(decodeLiteral(encoded)).toEqual(bytes);
  });

  test("blob ids are git's", () => {
    const root = repo({ "x.bin": new Uint8Array([1, 2, 0, 3]) });
    expect(blobId(new Uint8Array([1, 2, 0, 3]))).toBe(git(root, ["hash-object", "x.bin"]).out.trim());
  });

  test("paths are quoted as git quotes them", () => {
    expect(quotePath("a/plain name.txt")).toBe("a/plain name.txt");
    expect(quotePath('a/q"\\\t\n.txt')).toBe('"a/q\\"\\\\\\t\\n.txt"');
    expect(quotePath("a/é")).toBe('"a/\\303\\251"');
  });
});

/** An independent base85 decoder, so the encoder is checked against the format and not against itself. */
function decodeLiteral(lines: string[]): Uint8Array {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
  const out: number[] = [];
  for (const line of lines) {
    const c = line.charCodeAt(0);
    const len = c <= 90 ? c - 64 : c - 96 + 26;
    const bytes: number[] = [];
    for (let i = 1; i < line.length; i += 5) {
      let acc = 0;
      for (let j = 0; j < 5; j++) acc = acc * 85 + alphabet.indexOf(line[i + j]!);
      bytes.push((acc >>> 24) & 255, (acc >>> 16) & 255, (acc >>> 8) & 255, acc & 255);
    }
    out.push(...bytes.slice(0, len));
  }
  return new Uint8Array(inflateSync(Buffer.from(out)));
}
