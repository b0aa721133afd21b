// `npm test` as a whole: its wall time (target ≤ 120 s on two cores) and the CPU it used (user + system, every
// worker and subprocess counted), with the pass / skip / fail counts. The CPU time is the steadier figure on a shared
// machine: on two idle cores the wall time cannot fall below half of it.
//
//   bun bench/test-suite-bench.ts                 the suite as `npm test` runs it
//   bun bench/test-suite-bench.ts --files [N]     each test file alone instead, slowest by CPU first (top N, default 25)
//   bun bench/test-suite-bench.ts --parallel=4    the suite with another worker count
import { loadavg } from "node:os";
import { join, relative } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { check, skip, target } from "./stats.ts";

const ROOT = join(import.meta.dir, "..");
const bun = process.execPath;

/** What one `bun test` process cost, and what it said. */
interface Run {
  wallS: number;
  userS: number;
  systemS: number;
  pass: number;
  skip: number;
  fail: number;
  exitCode: number;
  /** The names of the skipped tests, as bun test lists them. */
  skipped: string[];
  /** The names of the failed tests. */
  failed: string[];
}

/** Runs `bun test …args` in the checkout and measures it: wall clock, and the CPU of its whole tree of processes. */
async function runTests(args: string[]): Promise<Run> {
  const t0 = performance.now();
  // As npm runs a script: the checkout's node_modules/.bin first on PATH.
  const env = { ...process.env, PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH ?? "/usr/bin:/bin"}` };
  const p = Bun.spawn([bun, "test", ...args], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  const exitCode = await p.exited;
  const wallS = (performance.now() - t0) / 1000;
  // wait4's usage counts the child and every descendant it waited for: the workers, and the processes tests spawn.
  const cpu = p.resourceUsage()?.cpuTime;
  const text = `${out}\n${err}`;
  const count = (word: string) => Number(text.match(new RegExp(`^\\s*(\\d+) ${word}$`, "m"))?.[1] ?? 0);
  return {
    wallS,
    userS: cpu ? Number(cpu.user) / 1e6 : Number.NaN,
    systemS: cpu ? Number(cpu.system) / 1e6 : Number.NaN,
    pass: count("pass"),
    skip: count("skip"),
    fail: count("fail"),
    exitCode,
    skipped: [...new Set(text.split("\n").filter((l) => l.startsWith("(skip) ")))].sort(),
    failed: [...new Set(text.split("\n").filter((l) => l.startsWith("(fail) ")))].sort(),
  };
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");

/** The flags `npm test` passes to `bun test`, read from package.json so the bench runs what the script runs. */
function npmTestFlags(): string[] {
  const script = pkg.scripts.test;
  if (!script.startsWith("bun test")) throw new Error(`bench: npm test is not "bun test …": ${script}`);
  return script.slice("bun test".length).trim().split(/\s+/).filter(Boolean);
}

async function perFile(top: number): Promise<void> {
  const glob = new Bun.Glob("test/**/*.test.ts");
  const files = [...glob.scanSync({ cwd: ROOT })].sort();
  console.log(`${files.length} test files, each alone (bun test --timeout 120000 <file>); load ${load()}`);
  const rows: { file: string; run: Run }[] = [];
  for (const file of files) {
    const run = await runTests(["--timeout", "120000", file]);
    rows.push({ file, run });
    const cpu = run.userS + run.systemS;
    console.log(`  ${cpu.toFixed(1).padStart(6)} CPU-s ${run.wallS.toFixed(1).padStart(6)} s  ${file}`);
  }
  rows.sort((a, b) => b.run.userS + b.run.systemS - (a.run.userS + a.run.systemS));
  const total = rows.reduce((s, r) => s + r.run.userS + r.run.systemS, 0);
  const wall = rows.reduce((s, r) => s + r.run.wallS, 0);
  console.log(
    `\nslowest ${Math.min(top, rows.length)} by CPU (of ${total.toFixed(0)} CPU-s, ${wall.toFixed(0)} s wall in all):`,
  );
  for (const { file, run } of rows.slice(0, top)) {
    const cpu = run.userS + run.systemS;
    console.log(
      `  ${cpu.toFixed(1).padStart(6)} CPU-s (user ${run.userS.toFixed(1)}, sys ${run.systemS.toFixed(1)}) ${run.wallS.toFixed(1).padStart(6)} s wall  ${relative(".", file)}${run.fail ? `  ${run.fail} FAILED` : ""}`,
    );
  }
  console.log(`load at the end ${load()}`);
}

async function suite(extra: string[]): Promise<void> {
  const flags = [...npmTestFlags().filter((f) => !extra.some((e) => e.split("=")[0] === f.split("=")[0])), ...extra];
  console.log(`bun test ${flags.join(" ")}; load before ${load()}`);
  const run = await runTests(flags);
  const cpu = run.userS + run.systemS;
  console.log(
    `${run.pass} pass, ${run.skip} skip, ${run.fail} fail; wall ${run.wallS.toFixed(1)} s, CPU ${cpu.toFixed(1)} s (user ${run.userS.toFixed(1)}, sys ${run.systemS.toFixed(1)}); load after ${load()}`,
  );
  for (const name of [...run.skipped, ...run.failed]) console.log(`  ${name}`);
  check(
    "npm test: every test passed",
    run.exitCode === 0 && run.fail === 0 && run.pass > 0,
    `${run.pass} passed, ${run.fail} failed, exit code ${run.exitCode}`,
    "0 failed, exit code 0",
  );
  // A run that did not get through the suite has no wall time to judge.
  if (run.exitCode !== 0 && run.pass === 0) run.wallS = Number.NaN;
  target({ name: "npm test: wall time", value: run.wallS, unit: "s", max: 120 });
  // On two idle cores the wall time cannot be below half the CPU time: this half is the floor the suite can reach.
  if (Number.isFinite(run.wallS) && !Number.isFinite(cpu))
    skip("npm test: CPU time / 2 (the two-core floor)", "this Bun reports no resource usage of its children");
  else
    target({
      name: "npm test: CPU time / 2 (the two-core floor)",
      value: Number.isFinite(run.wallS) ? cpu / 2 : Number.NaN,
      unit: "s",
      max: 120,
    });
}

const args = process.argv.slice(2);
const filesAt = args.indexOf("--files");
if (filesAt >= 0) await perFile(Number(args[filesAt + 1]) || 25);
else await suite(args.filter((a) => a.startsWith("--")));
