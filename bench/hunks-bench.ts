// Splitting a 10,000-line change with 200 scattered edits into hunks, and rebuilding the
// base with every other hunk kept; against the diff package's own structuredPatch of the
// same pair, measured in the same run. Target: splitting ≤ 20 ms (median).
import { structuredPatch } from "diff";
import { rebuildWithHunks, splitHunks } from "../core/staging/hunks.ts";
import { median, ms, target, timeSync } from "./stats.ts";

const RUNS = 9;
const TARGET_MS = 20;

const before = Array.from({ length: 10_000 }, (_, i) => `export const value${i} = compute(${i}, "row ${i}");\n`).join(
  "",
);
const lines = before.split("\n");
for (let k = 0; k < 200; k++) {
  const i = (k * 49 + 7) % 10_000;
  lines[i] = `${lines[i]} // edited ${k}`;
}
const after = lines.join("\n");

splitHunks(before, after); // warm up
const split = median(timeSync(RUNS, () => splitHunks(before, after)));
const hunks = splitHunks(before, after)!;
const kept = new Set(hunks.filter((h) => h.index % 2 === 0).map((h) => h.index));
const rebuild = median(timeSync(RUNS, () => rebuildWithHunks(before, hunks, kept)));
const baseline = median(
  timeSync(RUNS, () => structuredPatch("a", "b", before, after, undefined, undefined, { context: 3 })),
);

console.log(`hunks: 10,000 lines, 200 edits → ${hunks.length} hunks`);
console.log(
  `  splitHunks        median ${ms(split)}  (${(split / baseline).toFixed(2)}× structuredPatch's ${ms(baseline)})`,
);
console.log(`  rebuildWithHunks  median ${ms(rebuild)}  (every other hunk kept)`);
target({
  name: "split a 10,000-line, 200-edit diff into hunks",
  value: split,
  unit: "ms",
  max: TARGET_MS,
  baseline: { name: "structuredPatch", value: baseline },
});
