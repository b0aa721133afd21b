import { describe, expect, test } from "bun:test";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { createListFilesTool } from "../../tools/list-files.ts";
import { tempDir, writeTree } from "../support/temp.ts";
import { failure, toolContext } from "../support/tool-context.ts";

/** A temporary workspace holding `files` (removed after the run). */
function tree(files: Record<string, string | Uint8Array>): string {
  const root = tempDir("pencil-read-");
  writeTree(root, files);
  return root;
}

const list = createListFilesTool();
const enc = new TextEncoder();

describe("list_files", () => {
  test("tree order, directories marked with /, .git skipped, hidden files kept", async () => {
    const root = tree({ "b.ts": "", "a/x.ts": "", "a-b.ts": "", ".github/ci.yml": "", ".git/HEAD": "" });
    const { run } = toolContext(root);
    expect(await run(list, {})).toBe([".github/", ".github/ci.yml", "a/", "a/x.ts", "a-b.ts", "b.ts"].join("\n"));
  });

  test("a .gitignore that is a symbolic link is not read (it could point at anything)", async () => {
    const outside = tree({ id_ed25519: "secret.txt\n" });
    const root = tree({ "secret.txt": "", "b.txt": "" });
    symlinkSync(join(outside, "id_ed25519"), join(root, ".gitignore"));
    const { run } = toolContext(root);
    // Were the link followed, its line would hide secret.txt.
    expect(await run(list, {})).toContain("secret.txt");
  });

  test(".gitignore at the root and nested, with negation; the root's rules apply when listing a subdirectory", async () => {
    const root = tree({
      ".gitignore": "node_modules/\n*.log\n",
      "node_modules/pkg/index.js": "",
      "app.log": "",
      "src/.gitignore": "gen/\n!keep.log\n",
      "src/gen/out.ts": "",
      "src/keep.log": "",
      "src/other.log": "",
      "src/main.ts": "",
    });
    const { run } = toolContext(root);
    expect(await run(list, {})).toBe(
      [".gitignore", "src/", "src/.gitignore", "src/keep.log", "src/main.ts"].join("\n"),
    );
    expect(await run(list, { path: "src" })).toBe(["src/.gitignore", "src/keep.log", "src/main.ts"].join("\n"));
  });

  test("a directory asked for explicitly is listed even when ignored", async () => {
    const root = tree({
      ".gitignore": "node_modules/\n*.log\n",
      "node_modules/pkg/index.js": "",
      "node_modules/pkg/debug.log": "",
      "src/a.ts": "",
    });
    const { run } = toolContext(root);
    expect(await run(list, {})).toBe(".gitignore\nsrc/\nsrc/a.ts");
    expect(await run(list, { path: "node_modules/pkg" })).toBe("node_modules/pkg/debug.log\nnode_modules/pkg/index.js");
  });

  test("pattern: a name glob at any depth, or a path glob relative to path", async () => {
    const root = tree({ "src/a.ts": "", "src/deep/b.ts": "", "src/c.js": "", "top.ts": "" });
    const { run } = toolContext(root);
    expect(await run(list, { pattern: "*.ts" })).toBe("src/a.ts\nsrc/deep/b.ts\ntop.ts");
    expect(await run(list, { path: "src", pattern: "deep/*.ts" })).toBe("src/deep/b.ts");
    expect(await run(list, { pattern: "*.py" })).toStartWith('No entries under the workspace match "*.py".');
  });

  test("a symlinked directory is listed, not followed", async () => {
    const root = tree({ "real/a.ts": "" });
    symlinkSync(join(root, "real"), join(root, "link"));
    const { run } = toolContext(root);
    expect(await run(list, {})).toBe("link@\nreal/\nreal/a.ts\n(@ marks a symbolic link: listed, not followed)");
  });

  test("staged creations appear (with new directories) and staged deletions disappear", async () => {
    const root = tree({ "a.ts": "", "b.ts": "" });
    const t = toolContext(root);
    t.overlay.writeBytes(join(t.ws.root, "new/dir/c.ts"), enc.encode("x"));
    t.overlay.remove(join(t.ws.root, "b.ts"));
    expect(await t.run(list, {})).toBe("a.ts\nnew/\nnew/dir/\nnew/dir/c.ts");
  });

  test("secret env files and policy-hidden paths are not listed", async () => {
    const root = tree({ ".env": "", ".env.local": "", ".env.example": "", "private/x": "", "ok.ts": "" });
    const t = toolContext(root);
    t.ctx.visible = (real) => !real.includes("/private");
    expect(await t.run(list, {})).toBe(".env.example\nok.ts");
  });

  test("capped, with the total and how to narrow", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`f${String(i).padStart(2, "0")}.txt`] = "";
    const root = tree(files);
    const { run } = toolContext(root, { limits: { listMaxEntries: 10 } });
    const out = (await run(list, {})).split("\n");
    expect(out.length).toBe(11);
    expect(out[9]).toBe("f09.txt");
    expect(out[10]).toBe('[10 of 30 entries shown. Narrow with path (a subdirectory) or pattern (e.g. "*.ts").]');
  });

  test("a file or a missing path is a clear error", async () => {
    const root = tree({ "a.ts": "" });
    const { run } = toolContext(root);
    expect((await failure(run(list, { path: "a.ts" }))).message).toBe(
      "a.ts is a file, not a directory. Use read_file to read it, or list its directory.",
    );
    expect((await failure(run(list, { path: "nope" }))).message).toContain("nope does not exist");
  });
});
