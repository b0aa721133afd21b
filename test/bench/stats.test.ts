// The benchmarks' verdicts: a figure meets its target or not (table-driven, no timing), a bench process exits 1
// when it missed one, and `npm run bench` (bench/run-all.ts) sums every bench into one table and exits 1 naming
// each miss, crash, silent bench and stray file, while a skipped figure counts as skipped, not met.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type Figure, judge } from "../../bench/stats.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const BENCH = join(import.meta.dir, "../../bench");
const STATS = JSON.stringify(join(BENCH, "stats.ts"));

describe("judge", () => {
  const cases: [string, Omit<Figure, "name" | "unit">, "MET" | "NOT MET"][] = [
    ["below a maximum", { value: 9, max: 10 }, "MET"],
    ["at a maximum", { value: 10, max: 10 }, "MET"],
    ["over a maximum", { value: 10.01, max: 10 }, "NOT MET"],
    ["over a minimum", { value: 60_000, min: 50_000 }, "MET"],
    ["at a minimum", { value: 0.95, min: 0.95 }, "MET"],
    ["under a minimum", { value: 0.9, min: 0.95 }, "NOT MET"],
    ["a value that could not be computed", { value: Number.NaN, max: 10 }, "NOT MET"],
    ["an infinite rate", { value: Number.POSITIVE_INFINITY, min: 1 }, "NOT MET"],
  ];
  for (const [what, figure, verdict] of cases)
    test(`${what}: ${verdict}`, () => expect(judge({ name: what, unit: "ms", ...figure })).toBe(verdict));

  test("a figure needs exactly one bound", () => {
    expect(() => judge({ name: "both", unit: "ms", value: 1, max: 2, min: 0 })).toThrow(/exactly one of max and min/);
    expect(() => judge({ name: "neither", unit: "ms", value: 1 })).toThrow(/exactly one of max and min/);
  });
});

/** Fake benches: each states its targets through the real helper, with fixed values. */
const FAKES: Record<string, string> = {
  "met-bench.ts": `import { target } from ${STATS};
target({ name: "fast thing", value: 12.34, unit: "ms", max: 20, baseline: { name: "bare thing", value: 3 } });`,
  "miss-bench.ts": `import { check, target } from ${STATS};
target({ name: "slow thing", value: 45, unit: "ms", max: 20 });
target({ name: "rate", value: 60000, unit: "/s", min: 50000 });
check("state unchanged", true, "unchanged", "unchanged");`,
  "skip-bench.ts": `import { skip } from ${STATS};
skip("sandboxed thing", "no namespace sandbox here");`,
  "reset-bench.ts": `import { target } from ${STATS};
target({ name: "missed, then reset", value: 3, unit: "ms", max: 1 });
process.exitCode = 0;`,
  "exit-bench.ts": `import { finish, target } from ${STATS};
target({ name: "held open", value: 0.5, unit: "share", min: 0.95 });
setInterval(() => {}, 1000);
finish();`,
};

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  const proc = Bun.spawn([process.execPath, ...argv], { stdout: "pipe", stderr: "pipe", env: { ...process.env } });
  const out = (await new Response(proc.stdout).text()) + (await new Response(proc.stderr).text());
  return { code: await proc.exited, out };
}

describe("a bench process", () => {
  const dir = tempDir("pencil-bench-fake-");
  writeTree(dir, FAKES);

  test("prints each figure with its target and exits 0 when every target is met", async () => {
    const { code, out } = await run([join(dir, "met-bench.ts")]);
    expect(out).toContain("fast thing: 12.3 ms; baseline bare thing 3.0 ms — target ≤ 20 ms: MET");
    expect(code).toBe(0);
  });

  test("exits 1 when a target is missed, and still prints the ones it met", async () => {
    const { code, out } = await run([join(dir, "miss-bench.ts")]);
    expect(out).toContain("slow thing: 45.0 ms — target ≤ 20 ms: NOT MET");
    expect(out).toContain("rate: 60,000/s — target ≥ 50,000/s: MET");
    expect(out).toContain("state unchanged: unchanged — target unchanged: MET");
    expect(code).toBe(1);
  });

  test("a miss still exits 1 when a library resets process.exitCode on its way out", async () => {
    const { code } = await run([join(dir, "reset-bench.ts")]);
    expect(code).toBe(1);
  });

  test("a skipped figure is not a miss", async () => {
    const { code, out } = await run([join(dir, "skip-bench.ts")]);
    expect(out).toContain("sandboxed thing: no namespace sandbox here: SKIPPED");
    expect(code).toBe(0);
  });

  test("finish() ends a bench held open by a timer with the verdict's exit code", async () => {
    const { code, out } = await run([join(dir, "exit-bench.ts")]);
    expect(out).toContain("held open: 0.500 — target ≥ 0.95: NOT MET");
    expect(code).toBe(1);
  });
});

describe("npm run bench (bench/run-all.ts)", () => {
  test("one table of every figure; exit 1 naming each miss, crash, silent bench and stray file", async () => {
    const dir = tempDir("pencil-bench-all-");
    writeTree(dir, {
      ...FAKES,
      "crash-bench.ts": `import { target } from ${STATS};
target({ name: "before the crash", value: 1, unit: "ms", max: 2 });
throw new Error("the fixture broke");`,
      "silent-bench.ts": `console.log("measured something, stated no target");`,
      "helper.ts": "export const x = 1;\n",
    });
    const { code, out } = await run([join(BENCH, "run-all.ts"), `--dir=${dir}`]);
    const summary = out.slice(out.indexOf("## Summary"));
    expect(summary).toMatch(/met-bench\s+fast thing\s+12\.3 ms\s+bare thing 3\.0 ms\s+≤ 20 ms\s+MET/);
    expect(summary).toMatch(/skip-bench\s+sandboxed thing\s+no namespace sandbox here\s+SKIPPED/);
    expect(summary).toContain("8 figures with a target: 4 met, 3 not met, 1 skipped");
    expect(summary).toContain("NOT MET: miss-bench.ts slow thing: 45.0 ms, target ≤ 20 ms");
    expect(summary).toContain("NOT MET: exit-bench.ts held open: 0.500, target ≥ 0.95");
    expect(summary).toContain("FAILED: crash-bench.ts failed (exit 1) before its verdicts");
    expect(summary).toContain("FAILED: silent-bench.ts recorded no verdict");
    expect(summary).toContain("left out: helper.ts");
    expect(code).toBe(1);
  });

  test("exit 0 when every target is met or skipped; a name picks the benches", async () => {
    const dir = tempDir("pencil-bench-ok-");
    writeTree(dir, FAKES);
    const { code, out } = await run([join(BENCH, "run-all.ts"), `--dir=${dir}`, "met", "skip"]);
    expect(out).toContain("2 figures with a target: 1 met, 0 not met, 1 skipped");
    expect(out).not.toContain("miss-bench");
    expect(code).toBe(0);
  });

  test("a name that matches no bench is an error that lists the benches", async () => {
    const dir = tempDir("pencil-bench-none-");
    writeTree(dir, FAKES);
    const { code, out } = await run([join(BENCH, "run-all.ts"), `--dir=${dir}`, "nothing-like-it"]);
    expect(out).toContain("no benchmark matches nothing-like-it");
    expect(out).toContain("met-bench.ts");
    expect(code).toBe(2);
  });
});
