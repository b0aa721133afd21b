import { describe, expect, test } from "bun:test";
import { installation, INSTALL_DIR, STANDALONE } from "../../core/installation.ts";

describe("installation", () => {
  test("from source the install directory is this repository's root, a clone", () => {
    expect(STANDALONE).toBe(false);
    expect(INSTALL_DIR).toBe(`${import.meta.dir.replace(/\/test\/core$/, "")}`);
    expect(installation().kind).toBe("clone");
  });

  test.each([
    ["/usr/lib/node_modules/@pencil-agent/pencil", "npm package"],
    ["/home/me/project/node_modules/@pencil-agent/pencil", "npm package"],
    ["/tmp/bunx-1000-@pencil-agent/pencil@latest/node_modules/@pencil-agent/pencil", "bunx"],
    ["/home/me/.bun/install/cache/.bunx-1000/@pencil-agent/pencil@latest/node_modules/@pencil-agent/pencil", "bunx"],
    ["/home/me/src/pencil", "clone"],
    ["/home/me/src/bunx-notes/pencil", "clone"],
  ])("%s is %s", (dir, kind) => {
    expect(installation(dir)).toEqual({ kind: kind as never, where: dir });
  });

  test("without an install directory it is the binary, named by its own path", () => {
    expect(installation(null, "/usr/local/bin/pencil")).toEqual({ kind: "binary", where: "/usr/local/bin/pencil" });
  });
});
