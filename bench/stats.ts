// The one helper every benchmark uses: medians and percentiles, the timing loops, and the verdicts. A bench
// states each target as data (`target({ name, value, unit, max | min, baseline })`); the helper prints the figure
// with its target and MET / NOT MET, records it for `npm run bench` (bench/run-all.ts), and makes the process exit
// non-zero when a target was missed. A figure that cannot be measured here is `skip`ped with its reason: it counts
// as skipped, never as met.
import { appendFileSync } from "node:fs";

/** Median of a list of numbers (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The value below which a share `p` (0..1) of the list lies: the nearest rank, `percentile(xs, 0.9)` is the p90. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Milliseconds one synchronous call of `fn` takes. */
export function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

/** Milliseconds one call of `fn` takes; a promise it returns is awaited inside the timing, a plain value is not. */
async function timeOnce(fn: () => unknown): Promise<number> {
  const t0 = performance.now();
  const result = fn();
  if (result instanceof Promise) await result;
  return performance.now() - t0;
}

/**
 * Runs `fn` `warmup` times uncounted, then `runs` times, and returns each counted duration in milliseconds
 * (promises awaited, plain calls not).
 */
export async function timeRuns(runs: number, fn: () => unknown, warmup = 0): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    const took = await timeOnce(fn);
    if (i >= warmup) out.push(took);
  }
  return out;
}

/** Durations of `runs` synchronous calls of `fn`, in milliseconds. */
export function timeSync(runs: number, fn: () => void): number[] {
  return Array.from({ length: runs }, () => time(fn));
}

/**
 * Times each contender `runs` times, taking turns (after `warmup` uncounted rounds), so that a change in the
 * machine's load falls on all of them alike; `gc` collects garbage before each timed call, so no contender pays
 * for the one before it. Returns each contender's durations in milliseconds.
 */
export async function interleaved<K extends string>(
  runs: number,
  contenders: Record<K, () => unknown>,
  options: { warmup?: number; gc?: boolean } = {},
): Promise<Record<K, number[]>> {
  const names = Object.keys(contenders) as K[];
  const out = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  const warmup = options.warmup ?? 1;
  for (let round = 0; round < warmup + runs; round++) {
    for (const name of names) {
      if (options.gc) Bun.gc(true);
      const took = await timeOnce(contenders[name]);
      if (round >= warmup) out[name].push(took);
    }
  }
  return out;
}

/** What `timeSpawns` measured of one command: wall and CPU (user + system) milliseconds, peak RSS in MiB. */
export interface SpawnTimes {
  wall: number[];
  cpu: number[];
  rssMiB: number[];
}

/**
 * Runs each command of `argvs` `runs` times, taking turns after `warmup` uncounted rounds (the file cache warmed),
 * and collects what each run cost. A command that exits non-zero throws with its stderr.
 */
export function timeSpawns(
  argvs: readonly string[][],
  runs: number,
  options: { cwd?: string; env?: Record<string, string>; warmup?: number } = {},
): SpawnTimes[] {
  const out: SpawnTimes[] = argvs.map(() => ({ wall: [], cpu: [], rssMiB: [] }));
  const warmup = options.warmup ?? 2;
  for (let round = 0; round < warmup + runs; round++) {
    for (const [i, argv] of argvs.entries()) {
      const t0 = performance.now();
      const r = Bun.spawnSync(argv, { cwd: options.cwd, env: options.env, stdout: "pipe", stderr: "pipe" });
      const wall = performance.now() - t0;
      if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${r.exitCode}: ${r.stderr.toString()}`);
      if (round < warmup) continue;
      out[i]!.wall.push(wall);
      const usage = r.resourceUsage;
      if (usage) {
        out[i]!.cpu.push(Number(usage.cpuTime.user + usage.cpuTime.system) / 1000);
        out[i]!.rssMiB.push(Number(usage.maxRSS) / 1024 / 1024);
      }
    }
  }
  return out;
}

/**
 * Milliseconds from spawning `argv` to the first request a local model server sees (`requests()` counts them),
 * after `enqueue()` gives the server its reply; waits for the process to end. Throws with its stderr when the
 * process ends before calling the model.
 */
export async function untilFirstRequest(
  argv: string[],
  options: { cwd: string; env: Record<string, string>; requests: () => number; enqueue: () => void },
): Promise<number> {
  options.enqueue();
  const before = options.requests();
  const t0 = performance.now();
  const proc = Bun.spawn(argv, {
    cwd: options.cwd,
    env: options.env,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (options.requests() === before) {
    if (exited)
      throw new Error(`${argv.join(" ")} ended before calling the model:\n${await new Response(proc.stderr).text()}`);
    await Bun.sleep(1);
  }
  const elapsed = performance.now() - t0;
  await proc.exited;
  return elapsed;
}

/** Milliseconds' digits: three decimals below 1, none from 1,000 (`0.204`, `12.3`, `1,523`). */
const msDigits = (n: number) =>
  Math.abs(n) < 1 ? n.toFixed(3) : Math.abs(n) < 1000 ? n.toFixed(1) : Math.round(n).toLocaleString("en-US");

/** `12.3 ms`. */
export function ms(n: number): string {
  return `${msDigits(n)} ms`;
}

/** How a figure's value reads: the unit it is printed with. */
export type Unit = "ms" | "s" | "×" | "/s" | "MiB" | "MB/s" | "count" | "share";

/** Each unit's digits and the text after them. */
const UNITS: Record<Unit, { digits: (n: number) => string; suffix: string }> = {
  ms: { digits: msDigits, suffix: " ms" },
  s: { digits: (n) => n.toFixed(2), suffix: " s" },
  "×": { digits: (n) => n.toFixed(2), suffix: "×" },
  "/s": { digits: (n) => Math.round(n).toLocaleString("en-US"), suffix: "/s" },
  MiB: { digits: (n) => n.toFixed(1), suffix: " MiB" },
  "MB/s": { digits: (n) => n.toFixed(0), suffix: " MB/s" },
  count: { digits: (n) => String(Math.round(n)), suffix: "" },
  share: { digits: (n) => n.toFixed(3), suffix: "" },
};

/** A value in its unit: `format(12.34, "ms")` is `12.3 ms`. */
export function format(value: number, unit: Unit): string {
  return Number.isFinite(value) ? `${UNITS[unit].digits(value)}${UNITS[unit].suffix}` : String(value);
}

/** A target's bound as people write it: `≤ 20 ms`, `≥ 50,000/s`, `≥ 0.95`, `≤ 1.5×`. */
function formatBound(bound: number, unit: Unit): string {
  return `${bound.toLocaleString("en-US", { maximumFractionDigits: 6 })}${UNITS[unit].suffix}`;
}

/** One figure and its target, as a bench states it. Exactly one of `max` and `min` is given. */
export interface Figure {
  /** What was measured, as the final table names it. */
  name: string;
  value: number;
  unit: Unit;
  /** The target is value ≤ max. */
  max?: number;
  /** The target is value ≥ min. */
  min?: number;
  /** The same run's baseline, where the target is a ratio or an overhead over it (value in `unit` unless given). */
  baseline?: { name: string; value: number; unit?: Unit };
}

/** MET: the figure is within its target; NOT MET: it is not (or could not be computed); SKIPPED: not measured here. */
export type Verdict = "MET" | "NOT MET" | "SKIPPED";

/** One line of the final table: what a bench recorded about one figure. */
export interface Result {
  name: string;
  verdict: Verdict;
  /** The figure as printed (`12.3 ms`), or the reason it was skipped. */
  value: string;
  /** The target as printed (`≤ 20 ms`). */
  target: string;
  /** The same run's baseline as printed (`plain rg 166 ms`), or "". */
  baseline: string;
}

/** The verdict on a figure: a value that is not a finite number never meets its target. */
export function judge(figure: Figure): Exclude<Verdict, "SKIPPED"> {
  const { value, max, min } = figure;
  if ((max === undefined) === (min === undefined))
    throw new Error(`bench: "${figure.name}" needs exactly one of max and min`);
  if (!Number.isFinite(value)) return "NOT MET";
  return (max !== undefined ? value <= max : value >= min!) ? "MET" : "NOT MET";
}

/** The variable run-all.ts sets: the file each bench appends its results to (one JSON object a line). */
export const RESULTS_FILE_VARIABLE = "PENCIL_BENCH_RESULTS";

const results: Result[] = [];
// Set again as the process ends: a library may reset process.exitCode on its way out (PGlite's WebAssembly runtime
// sets it to 0 when it closes), which would turn a missed target into a clean exit.
process.on("exit", () => {
  if (results.some((r) => r.verdict === "NOT MET")) process.exitCode = 1;
});

function record(result: Result): void {
  results.push(result);
  if (result.verdict === "NOT MET") process.exitCode = 1;
  const file = process.env[RESULTS_FILE_VARIABLE];
  if (file) appendFileSync(file, `${JSON.stringify(result)}\n`);
  const base = result.baseline ? `; baseline ${result.baseline}` : "";
  const target = result.verdict === "SKIPPED" ? "" : ` — target ${result.target}`;
  console.log(`  ${result.name}: ${result.value}${base}${target}: ${result.verdict}`);
}

/** Prints the figure with its target and verdict, records it, and answers whether it met the target. */
export function target(figure: Figure): boolean {
  const verdict = judge(figure);
  const bound =
    figure.max !== undefined
      ? `≤ ${formatBound(figure.max, figure.unit)}`
      : `≥ ${formatBound(figure.min!, figure.unit)}`;
  const b = figure.baseline;
  record({
    name: figure.name,
    verdict,
    value: format(figure.value, figure.unit),
    target: bound,
    baseline: b ? `${b.name} ${format(b.value, b.unit ?? figure.unit)}` : "",
  });
  return verdict === "MET";
}

/**
 * A target that is a condition rather than a bound ("held state unchanged", "falls back"): `shown` says what was
 * found, `expected` what the target asks. Prints, records, and answers `ok`.
 */
export function check(name: string, ok: boolean, shown: string, expected: string): boolean {
  record({ name, verdict: ok ? "MET" : "NOT MET", value: shown, target: expected, baseline: "" });
  return ok;
}

/** A figure this machine cannot measure (no namespace sandbox, no Chromium): recorded as skipped, with why. */
export function skip(name: string, reason: string): void {
  record({ name, verdict: "SKIPPED", value: reason, target: "", baseline: "" });
}

/** Ends the bench now: exit code 1 when a target was missed, else 0 (for benches whose servers keep the process up). */
export function finish(): never {
  process.exit(results.some((r) => r.verdict === "NOT MET") ? 1 : 0);
}
