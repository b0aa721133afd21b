import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { npxFromCache, programDirs } from "../../../tools/mcp/program.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

// What a stdio server's command runs and needs to see, found on a real disk laid out as npm, pnpm, npx and venv do.

describe("programDirs: a server's package and its dependency tree", () => {
  test("npm's hoisted layout: the package and each dependency it resolves to, up the tree; a nested one comes with its package", () => {
    const root = realpathSync(tempDir("pencil-prefix-"));
    writeTree(root, {
      "node_modules/srv/package.json": JSON.stringify({ name: "srv", dependencies: { a: "1", b: "1" } }),
      "node_modules/srv/dist/index.js": "",
      "node_modules/srv/node_modules/b/package.json": JSON.stringify({ name: "b" }),
      "node_modules/a/package.json": JSON.stringify({ name: "a", dependencies: { c: "1" } }),
      "node_modules/c/package.json": JSON.stringify({ name: "c" }),
      "node_modules/unrelated/package.json": JSON.stringify({ name: "unrelated" }),
    });
    const dirs = programDirs(join(root, "node_modules/srv/dist/index.js"), null).sort();
    expect(dirs).toEqual(
      ["node_modules/a", "node_modules/c", "node_modules/srv", "node_modules/srv/node_modules/b"].map((d) =>
        join(root, d),
      ),
    );
  });

  test("pnpm's layout: a dependency reached through a link brings the directory holding the link", () => {
    const root = realpathSync(tempDir("pencil-pnpm-"));
    const store = "node_modules/.pnpm";
    writeTree(root, {
      [`${store}/srv@1.0.0/node_modules/srv/package.json`]: JSON.stringify({ name: "srv", dependencies: { dep: "1" } }),
      [`${store}/srv@1.0.0/node_modules/srv/index.js`]: "",
      [`${store}/dep@1.0.0/node_modules/dep/package.json`]: JSON.stringify({ name: "dep" }),
    });
    symlinkSync(join(root, store, "dep@1.0.0/node_modules/dep"), join(root, store, "srv@1.0.0/node_modules/dep"));
    const dirs = programDirs(join(root, store, "srv@1.0.0/node_modules/srv/index.js"), null);
    expect(dirs).toContain(join(root, store, "srv@1.0.0/node_modules"));
    expect(dirs).toContain(join(root, store, "dep@1.0.0/node_modules/dep"));
  });

  test("a Python virtual environment is shown whole, by its pyvenv.cfg; a file outside any package gives its directory", () => {
    const root = realpathSync(tempDir("pencil-venv-"));
    writeTree(root, { "venv/pyvenv.cfg": "home = /usr/bin\n", "tools/server.py": "" });
    mkdirSync(join(root, "venv/bin"));
    symlinkSync("/usr/bin/env", join(root, "venv/bin/python"));
    expect(programDirs(join(root, "venv/bin/python"), null)).toContain(join(root, "venv"));
    expect(programDirs(join(root, "tools/server.py"), null)).toEqual([join(root, "tools")]);
  });
});

describe("npxFromCache: npx's own install directory", () => {
  test("found by npx's hash of the spec, its bin picked as npx does; another version, or an unknown option, is left to npx", () => {
    const cache = realpathSync(tempDir("pencil-npm-"));
    const hash = createHash("sha512").update("@scope/srv").digest("hex").slice(0, 16);
    const dir = join(cache, "_npx", hash);
    writeTree(dir, {
      "node_modules/@scope/srv/package.json": JSON.stringify({ name: "@scope/srv", version: "2.1.0", bin: "cli.js" }),
      "node_modules/@scope/srv/cli.js": "#!/usr/bin/env node\n",
    });
    chmodSync(join(dir, "node_modules/@scope/srv/cli.js"), 0o755);
    mkdirSync(join(dir, "node_modules/.bin"));
    symlinkSync("../@scope/srv/cli.js", join(dir, "node_modules/.bin/srv"));
    expect(npxFromCache("npx", ["-y", "@scope/srv", "/ws", "--flag"], cache)).toEqual({
      spec: "@scope/srv",
      bin: join(dir, "node_modules/.bin/srv"),
      installDir: dir,
      args: ["/ws", "--flag"],
    });
    expect(npxFromCache("/usr/bin/npx", ["--yes", "--", "@scope/srv"], cache)?.bin).toBe(
      join(dir, "node_modules/.bin/srv"),
    );
    expect(npxFromCache("npx", ["-y", "@scope/other"], cache)).toBeNull();
    expect(npxFromCache("npx", ["-y", "@scope/srv@^3"], cache)).toBeNull();
    expect(npxFromCache("npx", ["--registry=https://elsewhere", "@scope/srv"], cache)).toBeNull();
    expect(npxFromCache("node", ["@scope/srv"], cache)).toBeNull();
  });
});
