import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { openWorkspace, realPathLoose, resolveInWorkspace } from "../../core/workspace.ts";
import { tempDir, writeTree } from "../support/temp.ts";
import { PathError } from "../../core/errors/path-error.ts";

function setup() {
  const base = tempDir();
  const root = join(base, "ws");
  const outside = join(base, "outside");
  const home = join(base, "home");
  writeTree(root, { "src/a.ts": "a", "README.md": "r" });
  writeTree(outside, { "secret.txt": "s", "dir/x.txt": "x" });
  mkdirSync(home, { recursive: true });
  return { base, root, outside, home, ws: openWorkspace(root, home) };
}

describe("resolveInWorkspace", () => {
  test("relative, dot-dot and absolute paths resolve lexically when nothing is linked", () => {
    const { ws, root, outside } = setup();
    expect(resolveInWorkspace(ws, "src/a.ts")).toMatchObject({
      real: join(root, "src/a.ts"),
      inside: true,
      relative: "src/a.ts",
      exists: true,
    });
    expect(resolveInWorkspace(ws, "src/../README.md").relative).toBe("README.md");
    const escaped = resolveInWorkspace(ws, "../outside/secret.txt");
    expect(escaped).toMatchObject({ real: join(outside, "secret.txt"), inside: false, relative: null });
    expect(resolveInWorkspace(ws, join(root, "src/a.ts")).inside).toBe(true);
    expect(resolveInWorkspace(ws, "new/dir/file.ts")).toMatchObject({
      inside: true,
      exists: false,
      relative: "new/dir/file.ts",
    });
  });

  test("~ expands to the home directory", () => {
    const { ws, home } = setup();
    expect(resolveInWorkspace(ws, "~/.ssh/id_rsa")).toMatchObject({ real: join(home, ".ssh/id_rsa"), inside: false });
    expect(resolveInWorkspace(ws, "~").real).toBe(home);
  });

  test("a file symlink inside the workspace pointing outside resolves outside", () => {
    const { ws, root, outside } = setup();
    symlinkSync(join(outside, "secret.txt"), join(root, "innocent.txt"));
    expect(resolveInWorkspace(ws, "innocent.txt")).toMatchObject({ real: join(outside, "secret.txt"), inside: false });
  });

  test("a directory symlink pointing outside resolves every path below it outside", () => {
    const { ws, root, outside } = setup();
    symlinkSync(outside, join(root, "lib"));
    expect(resolveInWorkspace(ws, "lib/dir/x.txt")).toMatchObject({ real: join(outside, "dir/x.txt"), inside: false });
    expect(resolveInWorkspace(ws, "lib/new.txt")).toMatchObject({
      real: join(outside, "new.txt"),
      inside: false,
      exists: false,
    });
    // `..` after a linked directory climbs from the link's target, as the kernel does.
    expect(resolveInWorkspace(ws, "lib/dir/../secret.txt").real).toBe(join(outside, "secret.txt"));
  });

  test("a dangling symlink is judged by the target a write would create", () => {
    const { ws, root, outside } = setup();
    symlinkSync(join(outside, "not-yet.txt"), join(root, "dangling.txt"));
    expect(resolveInWorkspace(ws, "dangling.txt")).toMatchObject({
      real: join(outside, "not-yet.txt"),
      inside: false,
      exists: false,
    });
    symlinkSync("../outside/rel-target.txt", join(root, "relative-dangling"));
    expect(resolveInWorkspace(ws, "relative-dangling").real).toBe(join(outside, "rel-target.txt"));
  });

  test("chains of links are followed and loops are refused", () => {
    const { ws, root, outside } = setup();
    symlinkSync(join(outside, "secret.txt"), join(root, "hop2"));
    symlinkSync("hop2", join(root, "hop1"));
    expect(resolveInWorkspace(ws, "hop1").real).toBe(join(outside, "secret.txt"));
    symlinkSync("loop-b", join(root, "loop-a"));
    symlinkSync("loop-a", join(root, "loop-b"));
    expect(() => resolveInWorkspace(ws, "loop-a")).toThrow(/Too many symbolic links/);
  });

  test("a workspace reached through a symlink compares real paths", () => {
    const { base, root, home } = setup();
    const alias = join(base, "alias");
    symlinkSync(root, alias);
    const ws = openWorkspace(alias, home);
    expect(ws.root).toBe(root);
    expect(resolveInWorkspace(ws, join(alias, "src/a.ts"))).toMatchObject({ inside: true, relative: "src/a.ts" });
  });

  test("a sibling directory sharing the root's prefix is outside", () => {
    const { base, ws } = setup();
    writeTree(base, { "ws-evil/x": "x" });
    expect(resolveInWorkspace(ws, "../ws-evil/x").inside).toBe(false);
  });

  test("empty paths and NUL bytes are clear errors", () => {
    const { ws } = setup();
    expect(() => resolveInWorkspace(ws, "")).toThrow(PathError);
    expect(() => resolveInWorkspace(ws, "  ")).toThrow(/empty/);
    expect(() => resolveInWorkspace(ws, "a\0b")).toThrow(/NUL/);
  });

  test("a missing workspace says what to pass", () => {
    expect(() => openWorkspace("/definitely/not/here")).toThrow(/--workspace/);
  });

  test("realPathLoose appends missing components lexically", () => {
    const { root } = setup();
    expect(realPathLoose(join(root, "nope/../src/a.ts"))).toEqual({ real: join(root, "src/a.ts"), exists: true });
  });
});
