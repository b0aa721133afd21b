// bin/pencil finds the Bun that comes with Pencil in each layout an install leaves: the package's own node_modules,
// Bun's platform package when its postinstall did not run, a node_modules hoisted above the package, Bun on PATH
// last. A stand-in `bun` that names itself shows which one was started.
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "../support/temp.ts";

const LAUNCHER = join(import.meta.dir, "../../bin/pencil");
const OS = process.platform === "darwin" ? "darwin" : "linux";
const ARCH = process.arch === "arm64" ? "aarch64" : "x64";

/** A file that, run as Bun, prints its own name and the script it was given. */
function fakeBun(path: string, name: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `#!/bin/sh\necho "${name} $1"\n`);
  chmodSync(path, 0o755);
}

/** An installed package at `dir`: its launcher and its entry point. */
function packageAt(dir: string): string {
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(LAUNCHER, join(dir, "bin/pencil"));
  chmodSync(join(dir, "bin/pencil"), 0o755);
  writeFileSync(join(dir, "index.ts"), "");
  return join(dir, "bin/pencil");
}

function launch(launcher: string, path = "/usr/bin:/bin"): { status: number | null; out: string; err: string } {
  const r = spawnSync(launcher, ["--version"], { env: { PATH: path }, encoding: "utf8" });
  return { status: r.status, out: r.stdout.trim(), err: r.stderr.trim() };
}

describe("bin/pencil finds Bun", () => {
  test("in the package's own node_modules, as npm's postinstall left it", () => {
    const pkg = join(tempDir(), "lib/node_modules/@pencil-agent/pencil");
    const launcher = packageAt(pkg);
    fakeBun(join(pkg, "node_modules/bun/bin/bun.exe"), "own");
    mkdirSync(join(pkg, "node_modules/.bin"));
    symlinkSync("../bun/bin/bun.exe", join(pkg, "node_modules/.bin/bun"));
    expect(launch(launcher)).toEqual({ status: 0, out: `own ${pkg}/index.ts`, err: "" });
  });

  test("in Bun's platform package when the postinstall never ran (npm i --ignore-scripts)", () => {
    const pkg = join(tempDir(), "lib/node_modules/@pencil-agent/pencil");
    const launcher = packageAt(pkg);
    // The placeholder bun.exe that the postinstall would have replaced: not a program.
    mkdirSync(join(pkg, "node_modules/bun/bin"), { recursive: true });
    writeFileSync(join(pkg, "node_modules/bun/bin/bun.exe"), "placeholder\n", { mode: 0o755 });
    mkdirSync(join(pkg, "node_modules/.bin"), { recursive: true });
    symlinkSync("../bun/bin/bun.exe", join(pkg, "node_modules/.bin/bun"));
    fakeBun(join(pkg, `node_modules/@oven/bun-${OS}-${ARCH}/bin/bun`), "platform");
    expect(launch(launcher)).toEqual({ status: 0, out: `platform ${pkg}/index.ts`, err: "" });
  });

  test("hoisted into a project's node_modules above the package (a local npm i)", () => {
    const project = tempDir();
    const pkg = join(project, "node_modules/@pencil-agent/pencil");
    const launcher = packageAt(pkg);
    fakeBun(join(project, "node_modules/.bin/bun"), "hoisted");
    expect(launch(launcher)).toEqual({ status: 0, out: `hoisted ${pkg}/index.ts`, err: "" });
  });

  test("on PATH when none came with it (bunx), and a clear error when there is none at all", () => {
    const root = tempDir();
    const pkg = join(root, "bunx-0-pencil/node_modules/@pencil-agent/pencil");
    const launcher = packageAt(pkg);
    fakeBun(join(root, "path/bun"), "on-path");
    expect(launch(launcher, `${join(root, "path")}:/usr/bin:/bin`)).toEqual({
      status: 0,
      out: `on-path ${pkg}/index.ts`,
      err: "",
    });
    const none = launch(launcher);
    expect(none.status).toBe(1);
    expect(none.err).toContain("cannot find Bun");
    expect(none.err).toContain("npm i -g @pencil-agent/pencil");
  });
});
