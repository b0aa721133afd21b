import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { INDEX } from "../../support/cli.ts";
import { tempDir } from "../../support/temp.ts";

const LAUNCHER = join(join(import.meta.dir, "../.."), "../bin/pencil");

function hostileRepo() {
  const repo = tempDir("pencil-hostile-");
  // A cloned repository trying to move Pencil's trusted state into itself.
  writeFileSync(join(repo, ".env"), "PENCIL_HOME=.pencil-home\n");
  const home = tempDir("pencil-home-");
  const env = {
    PATH: `${join(join(import.meta.dir, "../.."), "../node_modules/.bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: home,
    NO_COLOR: "1",
  };
  return { repo, home, env };
}

test("bin/pencil starts Bun in Pencil's directory: a workspace's .env is never loaded", () => {
  const { repo, home, env } = hostileRepo();
  const result = spawnSync(LAUNCHER, ["log"], { cwd: repo, env, encoding: "utf8" });
  expect(result.status).toBe(0);
  expect(result.stdout).toContain(join(home, ".pencil", "changesets"));
  // And the command still runs on the caller's directory.
  const doctor = spawnSync(LAUNCHER, ["doctor", "--json"], { cwd: repo, env, encoding: "utf8" });
  const checks = JSON.parse(doctor.stdout) as { name: string; detail: string }[];
  expect(checks.find((c) => c.name === "workspace")!.detail).toBe(repo);
});

test("run directly from such a repository, a PENCIL_HOME inside the workspace is refused with exit 2", () => {
  const { repo, env } = hostileRepo();
  const result = spawnSync(process.execPath, [INDEX, "log"], { cwd: repo, env, encoding: "utf8" });
  expect(result.status).toBe(2);
  expect(result.stderr).toContain("is inside the workspace");
  expect(result.stderr).toContain("bin/pencil");
});

test("a workspace's .env cannot pretend to be the launcher", () => {
  const { repo, env } = hostileRepo();
  writeFileSync(join(repo, ".env"), "PENCIL_CALLER_CWD=/\n");
  const result = spawnSync(process.execPath, [INDEX, "doctor", "--json"], { cwd: repo, env, encoding: "utf8" });
  const checks = JSON.parse(result.stdout) as { name: string; detail: string }[];
  expect(checks.find((c) => c.name === "workspace")!.detail).toBe(repo);
});

test("hints print the command the way the person started Pencil", () => {
  const { repo, env } = hostileRepo();
  writeFileSync(join(repo, ".env"), "");
  // Started as a path (./bin/pencil from a clone): the hint uses that path, not a `pencil` that is not on PATH.
  const byPath = spawnSync(LAUNCHER, ["log"], { cwd: repo, env, encoding: "utf8" });
  expect(byPath.stdout).toContain(`Try: ${LAUNCHER} demo`);
  // Found on PATH (npm link): plain `pencil`.
  const onPath = spawnSync("pencil", ["log"], {
    cwd: repo,
    env: { ...env, PATH: `${join(join(import.meta.dir, "../.."), "../bin")}:${env.PATH}` },
    encoding: "utf8",
  });
  expect(onPath.stdout).toContain("Try: pencil demo");
  // Bun started directly on index.ts.
  const direct = spawnSync(process.execPath, [INDEX, "log"], {
    cwd: join(join(import.meta.dir, "../.."), ".."),
    env: { ...env, PENCIL_HOME: join(env.HOME, ".pencil") },
    encoding: "utf8",
  });
  expect(direct.stdout).toContain("Try: bun index.ts demo");
});
