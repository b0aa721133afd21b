import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { compilePolicy, decide, parseRule } from "../../../core/policy/policy.ts";
import { HiddenScan } from "../../../core/scratch/hidden-scan.ts";
import { scratchPrefix, sweepStaleScratches } from "../../../core/scratch/live.ts";
import { overlayWorks } from "../../../core/scratch/overlay.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { createRunCommandTool } from "../../../tools/run-command.ts";
import { tempDir as sharedTempDir, writeTree } from "../../support/temp.ts";
import { failure, toolContext } from "../../support/tool-context.ts";

// The copy-on-write scratch kept across the commands of one run: refreshed from the staged view before each command.

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
const hasOverlay = sandboxAvailable() && overlayWorks(tempDir("pencil-kept-lower-"), tempDir("pencil-kept-probe-"));
if (!hasOverlay)
  console.warn("kept-scratch.test: unprivileged overlayfs is not available here; the kept scratch tests are SKIPPED.");

const enc = (text: string) => new TextEncoder().encode(text);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
/** The tool's text without its first line (the command echoed back). */
const after = (out: string) => out.slice(out.indexOf("\n"));

function setup(files: Record<string, string> = {}, writeCapBytes?: number) {
  const root = tempDir("pencil-kept-ws-");
  writeTree(root, { "a.txt": "original\n", "src/app.ts": "export const a = 1;\n", "README.md": "hello\n", ...files });
  const t = toolContext(root);
  const policy = compilePolicy({
    workspaceRoot: t.ws.root,
    home: t.ws.home,
    pencilHome: join(tempDir(), "ph"),
    rules: [parseRule("Read(private/**)", "deny", "test")],
  });
  t.ctx.visible = (real) => decide(policy, { tool: "run_command", access: "read", real }).decision === "allow";
  const scratchParent = tempDir("pencil-kept-parent-");
  const tool = createRunCommandTool({
    sandbox: "namespace",
    scratch: "overlay",
    scratchParent,
    parentEnv: RUNTIME_ENV,
    ...(writeCapBytes !== undefined ? { writeCapBytes } : {}),
  });
  const run = async (command: string) => after(await t.run(tool, { command }));
  const path = (rel: string) => join(t.ws.root, rel);
  return { ...t, root: t.ws.root, path, run, scratchParent, close: () => tool.close!() };
}

describe.skipIf(!hasOverlay)("a scratch kept for the run", () => {
  test("a command's change comes back staged once; the next command sees it and stages nothing; a revert by the agent shows", async () => {
    const { run, overlay, path, scratchParent, close } = setup();
    expect(await run("echo edited > a.txt")).toContain("Staged edit: a.txt");
    const second = await run("cat a.txt");
    expect(second).toContain("edited\n");
    expect(second).toContain("No file changes.");
    // The agent puts the original back (write_file): the staged view is the disk's again.
    overlay.writeBytes(path("a.txt"), enc("original\n"));
    const third = await run("cat a.txt");
    expect(third).toContain("original\n");
    expect(third).not.toContain("edited");
    expect(third).toContain("No file changes.");
    // One directory per run, kept between its commands, removed when it ends.
    expect(readdirSync(scratchParent)).toHaveLength(1);
    await close();
    expect(readdirSync(scratchParent)).toEqual([]);
    expect(readFileSync(path("a.txt"), "utf8")).toBe("original\n");
  });

  test("a file one command made and the next removed is unstaged; a later command does not see it", async () => {
    const { run, overlay, path } = setup();
    // A staged .gitignore before the run's first command is simply laid (nothing kept yet to lay afresh).
    overlay.writeBytes(path(".gitignore"), enc("out/\n"));
    const first = await run("mkdir -p gen && echo x > gen/n.txt");
    expect(first).toContain("Staged create: gen/n.txt");
    expect(first).not.toContain("laid again");
    expect(await run("rm -r gen")).toContain("Staged delete: gen/n.txt");
    expect(overlay.stat(path("gen/n.txt"))).toBeNull();
    expect(await run("ls gen 2>&1; echo x > a.txt; rm a.txt")).toContain("No such file");
    expect(await run("test -e a.txt || echo a-gone")).toContain("a-gone");
    expect(overlay.stat(path("a.txt"))).toBeNull();
  });

  test("what the agent stages, deletes and drops between commands shows exactly as the staged view has it", async () => {
    const { run, overlay, path } = setup({ "docs/guide.md": "guide\n" });
    expect(await run("echo one > new.txt; echo v2 > src/app.ts")).toContain("Staged create: new.txt");
    overlay.writeBytes(path("src/app.ts"), enc("v3 by edit_file\n"));
    overlay.remove(path("README.md"));
    overlay.writeBytes(path("docs/deep/added.md"), enc("added\n"));
    overlay.discard(path("new.txt")); // rejected by the owner
    const out = await run(
      "cat src/app.ts docs/deep/added.md; test -e README.md || echo readme-gone; test -e new.txt || echo new-gone; ls docs",
    );
    expect(out).toContain("v3 by edit_file\nadded\nreadme-gone\nnew-gone\ndeep\nguide.md\n");
    expect(out).toContain("No file changes.");
    // A command that changes a file staged earlier is diffed against the staged view.
    const edit = await run("echo more >> src/app.ts; echo back > README.md");
    expect(edit).toContain("Staged edit: src/app.ts");
    expect(edit).toContain("Staged create: README.md");
    expect(dec(overlay.readBytes(path("src/app.ts")))).toBe("v3 by edit_file\nmore\n");
    // Dropping the staged README.md (and the docs file) shows the disk again.
    overlay.discard(path("README.md"));
    overlay.discard(path("docs/deep/added.md"));
    const last = await run("cat README.md; ls docs");
    expect(last).toContain("hello\nguide.md\n");
    expect(last).not.toContain("deep");
    expect(readFileSync(path("README.md"), "utf8")).toBe("hello\n");
  });

  test("changes that are not staged do not outlive their command; a file below a deleted directory shows again", async () => {
    const { run, overlay, path } = setup({ "docs/a.md": "a\n", "docs/b.md": "b\n", ".gitignore": "build/\n" });
    const first = await run("ln -s a.txt link; echo S=1 > .env; rm -r docs; mkdir build; echo o > build/o.js");
    expect(first).toContain("Not staged: link");
    expect(first).toContain("Staged delete: docs/a.md");
    const second = await run("test -L link || echo no-link; test -e .env || echo no-env; ls docs 2>&1");
    expect(second).toContain("no-link\nno-env\n");
    expect(second).toContain("No such file");
    // The agent puts one file back: below the directory the command removed, the workspace's file shows again, the
    // other stays deleted, and what the run keeps in ignored trees stays.
    overlay.discard(path("docs/a.md"));
    const third = await run("cat docs/a.md build/o.js; test -e docs/b.md || echo b-gone");
    expect(third).toContain("a\no\nb-gone\n");
    expect(third).not.toContain("laid again");
    expect(third).toContain("No file changes.");
  });

  test("below a directory a command replaced (opaque), the workspace's file is shown again by laying the scratch afresh", async () => {
    const { run, overlay, path } = setup({ "docs/a.md": "a\n", "docs/b.md": "b\n" });
    const first = await run("rm -r docs && mkdir docs && echo n > docs/new.md");
    expect(first).toContain("Staged delete: docs/a.md");
    expect(first).toContain("Staged create: docs/new.md");
    overlay.discard(path("docs/a.md"));
    const second = await run("ls docs");
    expect(second).toContain("a.md\nnew.md\n");
    expect(second).not.toContain("b.md");
    expect(second).toContain("laid again");
    expect(second).toContain("No file changes.");
  });

  test("once the disk holding the scratch has less free than one command may write, what ignored trees kept is dropped, said", async () => {
    // A write cap larger than any disk here: the second command finds too little room.
    const { run } = setup({ ".gitignore": "dist/\n" }, 2 ** 50);
    expect(await run("mkdir -p dist && echo built > dist/out.js")).toContain("1 change in ignored files");
    const second = await run("cat dist/out.js; echo end");
    expect(second).toMatch(/Note: the disk holding the scratch had .+ free, less than the .+ one command may write/);
    expect(second).toContain("No such file or directory");
  });

  test("ignored trees are part of the overlay: writes there stay for the run, counted, never staged; their secrets stay hidden", async () => {
    const { run, overlay, path, root } = setup({
      ".gitignore": "dist/\n",
      "node_modules/pkg/index.js": "module.exports = 1;\n",
      "node_modules/pkg/.env": "LEAK=1\n",
    });
    const install = await run(
      "mkdir -p node_modules/fresh dist && echo installed > node_modules/fresh/index.js && echo built > dist/out.js && echo 2 >> node_modules/pkg/index.js; cat node_modules/pkg/.env",
    );
    expect(install).toContain("Not staged: 3 changes in ignored files");
    expect(install).not.toContain("LEAK");
    expect(overlay.list()).toEqual([]);
    const test2 = await run(
      "cat node_modules/fresh/index.js dist/out.js node_modules/pkg/index.js; cat node_modules/pkg/.env",
    );
    expect(test2).toContain("installed\nbuilt\nmodule.exports = 1;\n2\n");
    expect(test2).not.toContain("LEAK");
    expect(test2).toContain("No file changes.");
    // Never on disk.
    expect(existsSync(join(root, "node_modules/fresh"))).toBe(false);
    expect(existsSync(join(root, "dist"))).toBe(false);
    expect(readFileSync(path("node_modules/pkg/index.js"), "utf8")).toBe("module.exports = 1;\n");
    // Removing them is counted too, and the next command no longer sees them.
    expect(await run("rm -r node_modules/fresh dist")).toContain("Not staged: 2 changes in ignored files");
    expect(await run("ls node_modules; test -e dist || echo no-dist")).toContain("pkg\nno-dist\n");
    // Once a .gitignore changes, what earlier commands kept there is dropped: it might no longer be ignored.
    expect(await run("mkdir -p dist && echo again > dist/out.js")).toContain("1 change in ignored files");
    overlay.writeBytes(path(".gitignore"), enc("build/\n"));
    const fresh = await run("test -e dist || echo no-dist");
    expect(fresh).toContain("no-dist");
    expect(fresh).toContain("laid again");
    expect(overlay.list().map((e) => e.real)).toEqual([path(".gitignore")]);
  });

  test("the owner's edits on disk during the run show; a .env created mid-run, even deep in node_modules, is hidden from the next command", async () => {
    const { run, path } = setup({ "node_modules/pkg/lib/index.js": "x\n" });
    expect(await run("cat README.md")).toContain("hello\n");
    writeFileSync(path("README.md"), "edited by the owner\n");
    writeFileSync(path("src/.env"), "SRC_SECRET=1\n");
    writeFileSync(path("node_modules/pkg/lib/.env.local"), "DEEP_SECRET=1\n");
    mkdirSync(path("private"));
    writeFileSync(path("private/key.pem"), "PRIVATE\n");
    const out = await run("cat README.md; cat src/.env node_modules/pkg/lib/.env.local private/key.pem; ls -a src");
    expect(out).toContain("edited by the owner\n");
    expect(out).not.toContain("SECRET");
    expect(out).not.toContain("PRIVATE");
    expect(out).toContain("left out");
    expect(out).toContain("No file changes.");
  });

  test("a command that writes over a hidden entry stages nothing of it, and the next command still does not see the owner's", async () => {
    const { run } = setup({ ".env": "OWNER_SECRET=1\n" });
    expect(await run("cat .env; echo MINE=1 > .env")).toContain("Not staged: .env");
    const out = await run("cat .env 2>&1");
    expect(out).not.toContain("OWNER_SECRET");
    expect(out).not.toContain("MINE");
  });
});

describe.skipIf(!hasOverlay)("a kept scratch that cannot be made", () => {
  test("is a tool error that says what to do, and the command does not run", async () => {
    const root = tempDir("pencil-kept-inside-");
    writeTree(root, { "a.txt": "a\n" });
    const t = toolContext(root);
    const tool = createRunCommandTool({
      sandbox: "namespace",
      scratch: "overlay",
      scratchParent: join(t.ws.root, "tmp"),
      parentEnv: RUNTIME_ENV,
    });
    mkdirSync(join(t.ws.root, "tmp"));
    const error = await failure(t.run(tool, { command: "touch ran.txt" }));
    expect(error.message).toContain("could not be made, so it did not run");
    expect(error.message).toContain("set TMPDIR");
    expect(existsSync(join(t.ws.root, "ran.txt"))).toBe(false);
  });
});

describe.skipIf(!hasOverlay)("the kept layers", () => {
  test("are out of the command's reach: only the overlay leads into them", async () => {
    const { run, scratchParent } = setup();
    await run("echo one > one.txt");
    const out = await run(
      'ls -A "$HOME/../.." 2>&1; ls -A "$HOME/../../upper" 2>&1 | head -3; mkdir -p "$HOME/../../upper" 2>/dev/null; touch "$HOME/../../upper/evil" 2>/dev/null; echo tried',
    );
    expect(out).not.toContain("one.txt");
    expect(out).not.toContain("work\n");
    expect(out).toContain("No file changes.");
    const [runDir] = readdirSync(scratchParent);
    expect(readdirSync(join(scratchParent, runDir!, "upper")).sort()).toEqual(["one.txt"]);
  });
});

describe("the hidden entries' scan, kept for the run", () => {
  test("re-reads only the directories that changed, and finds a .env created in one", () => {
    const root = tempDir("pencil-kept-scan-");
    writeTree(root, { "a/b/c.txt": "", "a/d/e.txt": "", "f/g.txt": "", ".env": "" });
    const visible = (real: string) => !/\/\.env[^/]*$/.test(real);
    const scan = new HiddenScan(root);
    expect(scan.scan(visible)).toEqual([".env"]);
    writeFileSync(join(root, "a/d/.env.local"), "");
    expect(scan.scan(visible)).toEqual([".env", "a/d/.env.local"]);
    // Directories changed just now are read again until their times can tell (a coarse clock); the rest are not.
    expect(scan.lastRead).toBeLessThan(6);
  });
});

describe("a process that exits mid-run", () => {
  test("removes the scratch it kept, even without the run ending", () => {
    const root = tempDir("pencil-kept-exit-ws-");
    writeTree(root, { "a.txt": "a\n" });
    const parent = tempDir("pencil-kept-exit-parent-");
    const kept = join(import.meta.dir, "../../../core/scratch/kept.ts");
    const script = `
      const { KeptScratch } = await import(${JSON.stringify(kept)});
      const { DiskFileOps } = await import(${JSON.stringify(join(import.meta.dir, "../../../core/file-ops.ts"))});
      const { openWorkspace } = await import(${JSON.stringify(join(import.meta.dir, "../../../core/workspace.ts"))});
      const k = KeptScratch.open(openWorkspace(${JSON.stringify(root)}), new DiskFileOps(), ${JSON.stringify(parent)});
      k.prepare(() => true);
      console.log(require("node:fs").readdirSync(${JSON.stringify(parent)}).length);
      process.exit(0);`;
    const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("1");
    expect(readdirSync(parent)).toEqual([]);
  });
});

describe("scratch directories of dead processes", () => {
  test("are removed by the next sweep; live ones, other users' names and this process's own stay", () => {
    const parent = tempDir("pencil-kept-sweep-");
    const dead = spawnSync("true").pid!;
    const ns = scratchPrefix().split("-")[3]!;
    const stale = join(parent, `pencil-run-${dead}-${ns}-AbC123`);
    const live = join(parent, `pencil-run-1-${ns}-AbC123`);
    const mine = join(parent, `${scratchPrefix()}XyZ789`);
    const other = join(parent, "pencil-run-AbC123");
    for (const d of [stale, live, mine, other]) mkdirSync(join(d, "upper"), { recursive: true });
    expect(sweepStaleScratches(parent)).toBe(1);
    expect(readdirSync(parent).sort()).toEqual([live, mine, other].map((d) => d.slice(parent.length + 1)).sort());
    expect(readlinkSync("/proc/self/ns/pid")).toContain(ns);
  });
});
