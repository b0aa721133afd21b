import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DiskFileOps } from "../../../core/file-ops.ts";
import { Overlay } from "../../../core/staging/overlay.ts";
import { compilePolicy, decide, parseRule } from "../../../core/policy/policy.ts";
import { diffScratch } from "../../../core/scratch/diff.ts";
import { KeptScratch } from "../../../core/scratch/kept.ts";
import { overlayWorks } from "../../../core/scratch/overlay.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { createRunCommandTool, useOverlay, type RunCommandOptions } from "../../../tools/run-command.ts";
import { openWorkspace } from "../../../core/workspace.ts";
import { tempDir as sharedTempDir, writeTree } from "../../support/temp.ts";
import { toolContext } from "../../support/tool-context.ts";

// The copy-on-write scratch (an overlay of the workspace in the command's namespace) and the copy it falls back to.

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix?: string): string {
  const dir = sharedTempDir(prefix);
  made.push(dir);
  return dir;
}
const RUNTIME_ENV = { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`, LANG: "C.UTF-8" };
const hasOverlay = sandboxAvailable() && overlayWorks(tempDir("pencil-cow-lower-"), tempDir("pencil-cow-probe-"));
if (!hasOverlay)
  console.warn(
    "cow-scratch.test: unprivileged overlayfs is not available here; the overlay tests are SKIPPED (the copy is tested).",
  );

function setup(extra: RunCommandOptions) {
  const root = tempDir("pencil-cow-ws-");
  writeTree(root, {
    "src/app.ts": "export const a = 1;\n",
    "src/keep.ts": "keep\n",
    "README.md": "hello\n",
    "old/a.txt": "a\n",
    "old/sub/b.txt": "b\n",
    "redo/x.txt": "x\n",
    "redo/y.txt": "y\n",
    "gone.txt": "staged away\n",
    ".env": "SECRET=1\n",
    "private/key.pem": "PRIVATE\n",
  });
  symlinkSync(".env", join(root, "envlink"));
  const t = toolContext(root);
  const policy = compilePolicy({
    workspaceRoot: t.ws.root,
    home: t.ws.home,
    pencilHome: join(tempDir(), "ph"),
    rules: [parseRule("Read(private/**)", "deny", "test")],
  });
  t.ctx.visible = (real) => decide(policy, { tool: "run_command", access: "read", real }).decision === "allow";
  const tool = createRunCommandTool({
    sandbox: "namespace",
    scratchParent: tempDir("pencil-cow-parent-"),
    parentEnv: RUNTIME_ENV,
    ...extra,
  });
  return { root: t.ws.root, overlay: t.overlay, run: (command: string) => t.run(tool, { command }) };
}

/** The file system type the command's working directory is on, as its own mount table says. */
const FSTYPE = `awk -v d="$PWD" '$5 == d { sub(/.* - /, ""); print "fstype=" $1 }' /proc/self/mountinfo | tail -1`;

const both = hasOverlay ? (["overlay", "copy"] as const) : (["copy"] as const);

describe.skipIf(!sandboxAvailable()).each(both)("namespace scratch: %s", (kind) => {
  test("the command sees the staged state; what it changed comes back staged, whiteouts and opaque directories included; the disk is untouched", async () => {
    const { root, overlay, run } = setup({ scratch: kind });
    overlay.writeBytes(join(root, "src/staged.ts"), new TextEncoder().encode("staged\n"));
    overlay.writeBytes(join(root, "src/app.ts"), new TextEncoder().encode("export const a = 'staged';\n"));
    overlay.writeBytes(join(root, "newdir/deep/n.txt"), new TextEncoder().encode("n\n"));
    overlay.remove(join(root, "gone.txt"));
    const out = after(
      await run(
        [
          FSTYPE,
          "cat src/staged.ts src/app.ts newdir/deep/n.txt",
          "test -e gone.txt || echo gone-is-gone",
          "test -e .env || echo env-absent",
          "test -e private || echo private-absent",
          "test -L envlink || echo link-to-secret-absent",
          "echo made > src/made.ts",
          "echo more >> src/app.ts",
          "rm README.md",
          "rm -r old",
          "rm -r redo && mkdir redo && echo z > redo/z.txt",
          "rm src/staged.ts",
          "rm -r newdir",
          "touch src/keep.ts",
          "echo again > gone.txt",
          // The overlay's own layers are out of reach: only the overlay leads into them.
          'ls -A "$HOME/../upper" "$HOME/../work" 2>/dev/null | grep -v : | grep . && echo layers-visible',
          'touch "$HOME/../upper/evil" 2>/dev/null && echo layer-writable',
        ].join("; "),
      ),
    );
    expect(out).toContain(kind === "overlay" ? "fstype=overlay" : "fstype=");
    if (kind === "copy") expect(out).not.toContain("fstype=overlay");
    expect(out).toContain("staged\nexport const a = 'staged';\nn\n");
    expect(out).toContain("gone-is-gone");
    expect(out).toContain("env-absent");
    expect(out).toContain("private-absent");
    expect(out).toContain("link-to-secret-absent");
    expect(out).toContain("Staged create: src/made.ts");
    expect(out).toContain("Staged edit: src/app.ts");
    expect(out).toContain("Staged delete: README.md");
    expect(out).toContain("Staged delete: old/a.txt");
    expect(out).toContain("Staged delete: old/sub/b.txt");
    // rm -r then mkdir: an opaque directory in the overlay's upper layer.
    expect(out).toContain("Staged delete: redo/x.txt");
    expect(out).toContain("Staged delete: redo/y.txt");
    expect(out).toContain("Staged create: redo/z.txt");
    expect(out).toContain("Staged delete: src/staged.ts");
    expect(out).toContain("Staged delete: newdir/deep/n.txt");
    expect(out).toContain("Staged create: gone.txt");
    expect(out).not.toContain("layers-visible");
    expect(out).not.toContain("layer-writable");
    expect(out).not.toContain("evil");
    expect(out).not.toContain("keep.ts");
    expect(out).not.toContain(": .env");
    expect(out).not.toContain("private/");
    expect(dec(overlay.readBytes(join(root, "src/app.ts")))).toBe("export const a = 'staged';\nmore\n");
    expect(overlay.stat(join(root, "src/staged.ts"))).toBeNull();
    expect(overlay.stat(join(root, "redo/x.txt"))).toBeNull();
    // The disk: untouched.
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe("hello\n");
    expect(existsSync(join(root, "old/sub/b.txt"))).toBe(true);
    expect(existsSync(join(root, "src/made.ts"))).toBe(false);
    expect(readFileSync(join(root, ".env"), "utf8")).toBe("SECRET=1\n");
  });

  test("a command that changes nothing stages nothing; the write cap still stops a big writer", async () => {
    const { overlay, run } = setup({ scratch: kind, writeCapBytes: 256 * 1024 });
    expect(await run("cat src/app.ts > /dev/null; ls -R > /dev/null")).toContain("No file changes.");
    const out = await run("head -c 2000000 /dev/zero > big.bin; echo done");
    expect(out).toMatch(/File too large|File size limit exceeded|wrote more than/);
    // Nothing past the cap: no file larger than it reaches the staged state.
    for (const e of overlay.list()) expect(e.after?.bytes.length ?? 0).toBeLessThanOrEqual(256 * 1024);
  });
});

describe.skipIf(!hasOverlay)("choosing the scratch", () => {
  test("auto takes the overlay where it works; PENCIL_SCRATCH=copy or scratch: copy forces the copy", () => {
    const root = tempDir("pencil-cow-choose-");
    const parent = tempDir("pencil-cow-parent-");
    expect(useOverlay(root, { scratchParent: parent })).toBe(true);
    expect(useOverlay(root, { scratchParent: parent, scratch: "copy" })).toBe(false);
    const was = process.env.PENCIL_SCRATCH;
    process.env.PENCIL_SCRATCH = "copy";
    try {
      expect(useOverlay(root, { scratchParent: parent })).toBe(false);
    } finally {
      if (was === undefined) delete process.env.PENCIL_SCRATCH;
      else process.env.PENCIL_SCRATCH = was;
    }
    // A path overlayfs's options cannot carry gets the copy.
    expect(useOverlay(join(root, "a,b"), { scratchParent: parent })).toBe(false);
  });

  test("an overlay scratch copies nothing: only the staged files are in its upper layer, and the diff reads only that layer", async () => {
    const root = tempDir("pencil-cow-make-");
    writeTree(root, { "a.txt": "a\n", "src/b.txt": "b\n" });
    const overlay = new Overlay(new DiskFileOps());
    overlay.writeBytes(join(root, "src/c.txt"), new TextEncoder().encode("c\n"));
    overlay.remove(join(root, "a.txt"));
    const kept = KeptScratch.open(openWorkspace(root), overlay, tempDir());
    const s = kept.prepare(() => true);
    try {
      expect(s.overlay!.placed).toEqual(["src/c.txt"]);
      expect(s.overlay!.deletions).toEqual(["a.txt"]);
      expect(existsSync(join(s.dir, "src"))).toBe(false);
      expect(readFileSync(join(s.overlay!.upper, "src/c.txt"), "utf8")).toBe("c\n");
      expect(diffScratch(s, 1 << 20)).toEqual([]);
      // What a command would leave in the upper layer: a new file, a copy-up with the same bytes (no change).
      writeFileSync(join(s.overlay!.upper, "new.txt"), "new\n");
      writeFileSync(join(s.overlay!.upper, "src/b.txt"), "b\n");
      expect(diffScratch(s, 1 << 20).map((c) => `${c.change} ${c.rel}`)).toEqual(["create new.txt"]);
    } finally {
      kept.dispose();
    }
  });
});

const dec = (b: Uint8Array) => new TextDecoder().decode(b);
/** The tool's text without its first line (the command echoed back). */
const after = (out: string) => out.slice(out.indexOf("\n"));
