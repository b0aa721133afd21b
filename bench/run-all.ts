// `npm run bench [NAME…]`: runs every benchmark in turn (each in its own process, so one's memory and JIT state
// cannot colour another's figures), then prints one table of every figure with a target (value, baseline, target,
// MET / NOT MET / SKIPPED) and exits 1 when a target was missed, a bench failed, or a bench recorded no verdict,
// naming each. `--dir=PATH` runs the benches of another folder (the tests' fake benches).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { RESULTS_FILE_VARIABLE, type Result } from "./stats.ts";

/** The files of bench/ that are not benchmarks, and why each is not run on its own. */
const NOT_BENCHES: Record<string, string> = {
  "run-all.ts": "this runner",
  "stats.ts": "the helper every bench uses",
  "recovery-modes.ts": "the failure modes recovery-bench.ts replays",
  "finish-modes.ts": "the failure modes recovery-bench.ts replays",
};

const args = process.argv.slice(2);
const dir = args.find((a) => a.startsWith("--dir="))?.slice("--dir=".length) ?? import.meta.dir;
const only = args.filter((a) => !a.startsWith("--"));
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".ts"))
  .sort();
const benches = files.filter((f) => f.endsWith("-bench.ts"));
const strays = files.filter((f) => !f.endsWith("-bench.ts") && !(f in NOT_BENCHES));
const chosen = benches.filter((f) => only.length === 0 || only.some((o) => f.includes(o)));
if (chosen.length === 0) {
  console.error(`bench: no benchmark matches ${only.join(", ")} (the benchmarks: ${benches.join(", ")})`);
  process.exit(2);
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
console.log(`load average at the start: ${load()} (${navigator.hardwareConcurrency} cores)`);

interface Row extends Result {
  bench: string;
}
const rows: Row[] = [];
/** Benches that ended badly, with why: a crash, or no verdict at all. */
const failures: string[] = [];
const work = mkdtempSync(join(tmpdir(), "pencil-bench-results-"));
try {
  for (const file of chosen) {
    console.log(`\n## ${file}`);
    const resultsFile = join(work, `${file}.jsonl`);
    const t0 = performance.now();
    const proc = Bun.spawnSync([process.execPath, join(dir, file)], {
      stdout: "inherit",
      stderr: "inherit",
      env: { ...process.env, [RESULTS_FILE_VARIABLE]: resultsFile },
    });
    const seconds = (performance.now() - t0) / 1000;
    const mine: Row[] = existsSync(resultsFile)
      ? readFileSync(resultsFile, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => ({ bench: file, ...(JSON.parse(line) as Result) }))
      : [];
    rows.push(...mine);
    const missed = mine.some((r) => r.verdict === "NOT MET");
    console.log(`(${file}: exit ${proc.exitCode}, ${seconds.toFixed(1)} s, load ${load()})`);
    if (proc.exitCode !== 0 && !missed) failures.push(`${file} failed (exit ${proc.exitCode}) before its verdicts`);
    else if (mine.length === 0) failures.push(`${file} recorded no verdict (every bench states its targets)`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** Pads each column of `table` to its widest cell. */
function printTable(table: string[][]): void {
  const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  for (const r of table)
    console.log(
      r
        .map((cell, c) => cell.padEnd(widths[c]!))
        .join("  ")
        .trimEnd(),
    );
}

console.log(`\n## Summary (load average at the end: ${load()})\n`);
printTable([
  ["bench", "figure", "value", "baseline (same run)", "target", "verdict"],
  ...rows.map((r) => [r.bench.replace(/\.ts$/, ""), r.name, r.value, r.baseline, r.target, r.verdict]),
]);
const count = (v: Result["verdict"]) => rows.filter((r) => r.verdict === v).length;
console.log(
  `\n${rows.length} figures with a target: ${count("MET")} met, ${count("NOT MET")} not met, ${count("SKIPPED")} skipped`,
);
for (const f of strays) console.log(`left out: ${f} (not a *-bench.ts file, and not a known part of one)`);
const misses = rows.filter((r) => r.verdict === "NOT MET");
for (const r of misses) console.log(`NOT MET: ${r.bench} ${r.name}: ${r.value}, target ${r.target}`);
for (const f of failures) console.log(`FAILED: ${f}`);
process.exit(misses.length > 0 || failures.length > 0 || strays.length > 0 ? 1 : 0);
