// The npm package as a user gets it: `npm pack`, then `npm i -g` of the tarball into an empty prefix with no Bun on
// PATH, then `pencil` run from a directory outside the repository; and the same tarball through bunx. Slow by nature
// (two installs of the whole dependency tree), so the tarball is packed once, and the npm install and bunx's runs
// (the first installs it) start together in beforeAll: they share nothing but the tarball. Each test awaits its own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { memoryTempDir, tempDir } from "../support/temp.ts";

const ROOT = join(import.meta.dir, "../..");

/** PATH without any directory that holds a `bun`: what a machine with Node and npm only has. */
const PATH_WITHOUT_BUN = (process.env.PATH ?? "/usr/bin:/bin")
  .split(delimiter)
  .filter((d) => d && !existsSync(join(d, "bun")) && !d.includes("node_modules"))
  .join(delimiter);

/** npm's environment here: no Bun on PATH, errors only, and no look-up of a newer npm on the registry. */
const npmEnv: Record<string, string> = Object.fromEntries(
  Object.entries({
    ...process.env,
    PATH: PATH_WITHOUT_BUN,
    npm_config_loglevel: "error",
    npm_config_update_notifier: "false",
  }).filter((e): e is [string, string] => e[1] !== undefined && e[0] !== "npm_config_prefix"),
);
// (Under `npm test` npm passes its own prefix down; the install's prefix is the one given.)

// The install needs the registry or npm's cache; CI has both after `npm ci`. Without either it cannot run here.
// One ping tells both: npm missing does not start at all.
const ping = spawnSync("npm", ["ping", "--prefer-offline"], { env: npmEnv, timeout: 15_000 });
const skip =
  (ping.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT"
    ? "npm is not on PATH"
    : ping.status !== 0
      ? "the npm registry is unreachable"
      : "";
if (skip) console.log(`packaging: the npm package test is skipped: ${skip}`);

/** What a finished process left: its exit status (null if it could not finish), its output and its errors. */
type Finished = { status: number | null; stdout: string; stderr: string };

/** Runs `command` to its end without blocking, so the other install goes on meanwhile. */
async function run(
  command: string[],
  options: { cwd: string; env: Record<string, string>; timeout?: number },
): Promise<Finished> {
  const child = Bun.spawn(command, { ...options, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, status] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { status, stdout, stderr };
}

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

/** The tarball, the npm prefix and bunx's cache: ~0.5 GiB unpacked, so in memory when there is room. */
let base = "";
/** `npm pack --json`, run once by beforeAll, checked by the first test. */
let pack: Finished | undefined;
/** The packed tarball, installed by npm for the first test and run through bunx by the second. */
let tarball = "";
/** `npm i -g` of the tarball into an empty prefix, under way from beforeAll. */
let installing: Promise<Finished> | undefined;
/** bunx's first run of the tarball (`--version`), which installs it, then its demo: under way from beforeAll. */
let bunxRuns: Promise<{ version: Finished; demo?: Finished }> | undefined;
/** bunx's home and working directory, on disk like a user's. */
let bunxHome = "";

/** bunx of the tarball as bunx of the published name would run it: its own cache, dependencies from npm. */
const bunx = (args: string[]) =>
  run([process.execPath, "x", "--package", tarball, "pencil", ...args], {
    cwd: bunxHome,
    env: { PATH: PATH_WITHOUT_BUN, HOME: bunxHome, BUN_INSTALL_CACHE_DIR: join(base, "bunx-cache") },
    timeout: 170_000,
  });

beforeAll(async () => {
  if (skip !== "") return;
  base = memoryTempDir("pencil-pack-", 1024 ** 3);
  bunxHome = tempDir("pencil-bunx-home-");
  pack = await run(["npm", "pack", "--json", "--pack-destination", base], { cwd: ROOT, env: npmEnv });
  if (pack.status !== 0) return; // the first test reports it
  const [packed] = JSON.parse(pack.stdout) as { filename: string }[];
  tarball = join(base, packed!.filename);
  installing = run(
    ["npm", "i", "-g", "--prefix", join(base, "prefix"), "--prefer-offline", "--no-audit", "--no-fund", tarball],
    { cwd: base, env: npmEnv, timeout: 170_000 },
  );
  bunxRuns = bunx(["--version"]).then(async (version) => ({
    version,
    ...(version.status === 0 ? { demo: await bunx(["demo"]) } : {}),
  }));
}, 60_000);

// Half a GiB of memory back to the machine now rather than when the worker ends (a run's last file goes first).
afterAll(async () => {
  await Promise.allSettled([installing, bunxRuns]);
  if (base) rmSync(base, { recursive: true, force: true });
});

describe("the npm package", () => {
  test.skipIf(skip !== "")(
    "packs, installs into an empty prefix without Bun, and runs --version, demo and doctor from outside the repository",
    async () => {
      expect(pack?.status, pack?.stderr).toBe(0);
      const [packed] = JSON.parse(pack!.stdout) as { filename: string; files: { path: string }[]; size: number }[];
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

      const install = await installing!;
      expect(install.status, install.stderr).toBe(0);
      const prefix = join(base, "prefix");
      const installed = join(prefix, "lib/node_modules", pkg.name);
      console.log(
        `packaging: npm i -g into an empty prefix → ${(bytesUnder(installed) / 1024 / 1024).toFixed(0)} MiB installed`,
      );

      // A user's directory, far from the repository, with a home of its own and Node and npm only on PATH.
      const user = tempDir("pencil-pack-user-");
      const outside = join(user, "somewhere");
      const home = join(user, "home");
      mkdirSync(outside);
      mkdirSync(home);
      const userEnv: Record<string, string> = {
        PATH: `${join(prefix, "bin")}${delimiter}${PATH_WITHOUT_BUN}`,
        HOME: home,
      };
      const pencil = (args: string[]) => run(["pencil", ...args], { cwd: outside, env: userEnv });

      const version = await pencil(["--version"]);
      expect(version.status, version.stderr).toBe(0);
      expect(version.stdout).toBe(`pencil ${pkg.version} (npm package, ${installed})\n`);
      console.log(`packaging: pencil --version → ${version.stdout.trim()}`);

      const demo = await pencil(["demo"]);
      expect(demo.status, demo.stderr).toBe(0);
      expect(demo.stdout).toContain("Nothing was applied");
      expect(demo.stdout).toContain("slugify");
      console.log("packaging: pencil demo → the scripted run staged its changeset and applied nothing (no terminal)");

      const doctor = await pencil(["doctor"]);
      // No model is configured here, which doctor reports as a failure; everything it checks still runs.
      expect(doctor.stdout, doctor.stderr).toContain(`✓ workspace: ${outside}`);
      expect(doctor.stdout).toContain("✗ model: No model is configured");
      expect(doctor.stdout).toContain("brain store: embedded");
      // Keys go to ~/.pencil/.env: the package's folder is replaced on every upgrade, so doctor does not offer it.
      const checks = JSON.parse((await pencil(["doctor", "--json"])).stdout) as { name: string; fix?: string }[];
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
    async () => {
      expect(tarball).not.toBe("");
      const { version, demo } = await bunxRuns!;
      expect(version.status, version.stderr).toBe(0);
      expect(version.stdout).toMatch(new RegExp(`^pencil ${pkg.version.replaceAll(".", "\\.")} \\(bunx, `));
      console.log(`packaging: bunx pencil --version → ${version.stdout.trim()}`);
      expect(demo?.status, demo?.stderr).toBe(0);
      expect(demo!.stdout).toContain("slugify");
      console.log("packaging: bunx pencil demo → the scripted run staged its changeset");
    },
    240_000,
  );
});
