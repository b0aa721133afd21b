// The npm package as a user gets it: `npm pack`, then `npm i -g` of the tarball into an empty prefix with no Bun on
// PATH, then `pencil` run from a directory outside the repository. Slow by nature (one install), so one test does it all.
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { tempDir } from "../support/temp.ts";

const ROOT = join(import.meta.dir, "../..");

/** PATH without any directory that holds a `bun`: what a machine with Node and npm only has. */
const PATH_WITHOUT_BUN = (process.env.PATH ?? "/usr/bin:/bin")
  .split(delimiter)
  .filter((d) => d && !existsSync(join(d, "bun")) && !d.includes("node_modules"))
  .join(delimiter);

const npm = spawnSync("npm", ["--version"], { env: { ...process.env, PATH: PATH_WITHOUT_BUN }, encoding: "utf8" });
// The install needs the registry or npm's cache; CI has both after `npm ci`. Without either it cannot run here.
const registry =
  npm.status === 0
    ? spawnSync("npm", ["ping", "--prefer-offline"], {
        env: { ...process.env, PATH: PATH_WITHOUT_BUN },
        timeout: 15_000,
      })
    : null;
const skip = npm.status !== 0 ? "npm is not on PATH" : registry?.status !== 0 ? "the npm registry is unreachable" : "";
if (skip) console.log(`packaging: the npm package test is skipped: ${skip}`);

/** Total bytes of the files under `dir`, each hard-linked file once (Bun's package links bun and bunx to one binary). */
function bytesUnder(dir: string): number {
  let total = 0;
  const seen = new Set<number>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const st = statSync(join(entry.parentPath, entry.name));
    if (seen.has(st.ino)) continue;
    seen.add(st.ino);
    total += st.size;
  }
  return total;
}

/** The packed tarball, made by the first test and run through bunx by the second. */
let tarball = "";

describe("the npm package", () => {
  test.skipIf(skip !== "")(
    "packs, installs into an empty prefix without Bun, and runs --version, demo and doctor from outside the repository",
    () => {
      const base = tempDir("pencil-pack-");
      const env: Record<string, string | undefined> = {
        ...process.env,
        PATH: PATH_WITHOUT_BUN,
        npm_config_loglevel: "error",
      };
      // Under `npm test` npm passes its own prefix down; the install's prefix is the one given.
      delete env.npm_config_prefix;

      const pack = spawnSync("npm", ["pack", "--json", "--pack-destination", base], {
        cwd: ROOT,
        env,
        encoding: "utf8",
      });
      expect(pack.status, pack.stderr).toBe(0);
      const [packed] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[]; size: number }[];
      const shipped = packed!.files.map((f) => f.path);
      // Only what runs: no tests, benchmarks or fixtures, but the demo workspace and the brain's schema.
      expect(shipped.filter((p) => /^(test|bench|\.ci|\.github)\//.test(p) || p.includes("fixtures/"))).toEqual([]);
      expect(shipped).toContain("examples/demo/src/slugify.ts");
      expect(shipped).toContain("examples/demo-workspace.ts");
      expect(shipped).toContain("brain/schema.sql");
      expect(shipped).toContain("LICENSE");
      console.log(
        `packaging: npm pack → ${packed!.filename}, ${shipped.length} files, ${(packed!.size / 1024).toFixed(0)} KiB`,
      );

      tarball = join(base, packed!.filename);
      const prefix = join(base, "prefix");
      const install = spawnSync(
        "npm",
        ["i", "-g", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", join(base, packed!.filename)],
        { cwd: base, env, encoding: "utf8", timeout: 170_000 },
      );
      expect(install.status, install.stderr).toBe(0);
      const installed = join(prefix, "lib/node_modules", pkg.name);
      console.log(
        `packaging: npm i -g into an empty prefix → ${(bytesUnder(installed) / 1024 / 1024).toFixed(0)} MiB installed`,
      );

      // A user's directory, far from the repository, with a home of its own and Node and npm only on PATH.
      const outside = join(base, "somewhere");
      const home = join(base, "home");
      mkdirSync(outside);
      mkdirSync(home);
      const userEnv: Record<string, string> = {
        PATH: `${join(prefix, "bin")}${delimiter}${PATH_WITHOUT_BUN}`,
        HOME: home,
      };
      const pencil = (args: string[]) => spawnSync("pencil", args, { cwd: outside, env: userEnv, encoding: "utf8" });

      const version = pencil(["--version"]);
      expect(version.status, version.stderr).toBe(0);
      expect(version.stdout).toBe(`pencil ${pkg.version} (npm package, ${installed})\n`);
      console.log(`packaging: pencil --version → ${version.stdout.trim()}`);

      const demo = pencil(["demo"]);
      expect(demo.status, demo.stderr).toBe(0);
      expect(demo.stdout).toContain("Nothing was applied");
      expect(demo.stdout).toContain("slugify");
      console.log("packaging: pencil demo → the scripted run staged its changeset and applied nothing (no terminal)");

      const doctor = pencil(["doctor"]);
      // No model is configured here, which doctor reports as a failure; everything it checks still runs.
      expect(doctor.stdout, doctor.stderr).toContain(`✓ workspace: ${outside}`);
      expect(doctor.stdout).toContain("✗ model: No model is configured");
      expect(doctor.stdout).toContain("brain store: embedded");
      // Keys go to ~/.pencil/.env: the package's folder is replaced on every upgrade, so doctor does not offer it.
      const checks = JSON.parse(pencil(["doctor", "--json"]).stdout) as { name: string; fix?: string }[];
      const modelFix = checks.find((c) => c.name === "model")?.fix ?? "";
      expect(modelFix).toContain(`in the environment or in ${join(home, ".pencil/.env")};`);
      console.log(
        `packaging: pencil doctor → exit ${doctor.status}, ${doctor.stdout.split("\n").filter((l) => /^[✓✗!]/.test(l)).length} checks`,
      );
    },
    240_000,
  );

  test.skipIf(skip !== "")(
    "runs through bunx: --version says so, the demo runs",
    () => {
      expect(tarball).not.toBe("");
      const home = tempDir("pencil-bunx-home-");
      // bunx of the tarball as bunx of the published name would run it: its own cache, dependencies from npm.
      const bunx = (args: string[]) =>
        spawnSync(process.execPath, ["x", "--package", tarball, "pencil", ...args], {
          cwd: home,
          env: { PATH: PATH_WITHOUT_BUN, HOME: home, BUN_INSTALL_CACHE_DIR: join(home, "cache") },
          encoding: "utf8",
          timeout: 170_000,
        });
      const version = bunx(["--version"]);
      expect(version.status, version.stderr).toBe(0);
      expect(version.stdout).toMatch(new RegExp(`^pencil ${pkg.version.replaceAll(".", "\\.")} \\(bunx, `));
      console.log(`packaging: bunx pencil --version → ${version.stdout.trim()}`);
      const demo = bunx(["demo"]);
      expect(demo.status, demo.stderr).toBe(0);
      expect(demo.stdout).toContain("slugify");
      console.log("packaging: bunx pencil demo → the scripted run staged its changeset");
    },
    240_000,
  );
});
