// Speed of the checks that keep a run finishing: a tool answer's budget check on
// a 1 MB answer (target ≤ 1 ms), and apply_patch of a 50-hunk patch on a
// 10,000-line file, parse and apply (target ≤ 20 ms). Baselines measured in the
// same run: a bare slice of the answer, and the diff package applying the same
// change as a unified diff.
import { applyPatch, createPatch } from "diff";
import { answerBudgetFor, fitAnswer } from "../core/answer-budget.ts";
import { applyHunks, parseApplyPatch, type PatchHunk, type PatchOp } from "../tools/edit/patch-format.ts";
import { median, ms, target, timeRuns } from "./stats.ts";

const RUNS = 50;

// A 1 MB read_file answer (numbered lines), a search over minified lines, a command's output.
const read = Array.from(
  { length: 14_000 },
  (_, i) => `${String(i + 1).padStart(6)}\t${"const value = compute(x);".padEnd(66, " ")}`,
).join("\n");
const minified = Array.from({ length: 400 }, (_, i) => `dist/app.min.js:${i + 1}:${"a+b;".repeat(650)}`).join("\n");
const output = Array.from({ length: 40_000 }, (_, i) => `test ${i} ok`)
  .join("\n")
  .padEnd(1_000_000, "x");
const budget = answerBudgetFor(131_072);
const cases: [string, string][] = [
  ["read_file", read],
  ["search", minified],
  ["run_command", output],
];
console.log(`answer budget: ${budget.toLocaleString("en-US")} characters for a 131,072-token window`);
for (const [tool, text] of cases) {
  const mb = (text.length / 1_000_000).toFixed(2);
  const check = median(await timeRuns(RUNS, () => fitAnswer(tool, text, budget)));
  const slice = median(await timeRuns(RUNS, () => text.slice(0, budget)));
  target({
    name: `answer budget check, a ${mb} MB ${tool} answer`,
    value: check,
    unit: "ms",
    max: 1,
    baseline: { name: "a bare slice", value: slice },
  });
}

// 50 hunks spread over a 10,000-line file, each with three lines of context.
const lines = Array.from({ length: 10_000 }, (_, i) => `  line ${i + 1}: value = ${i * 7};`);
const file = `${lines.join("\n")}\n`;
const changed = [...lines];
const hunks: string[] = [];
for (let h = 0; h < 50; h++) {
  const at = 100 + h * 195;
  changed[at] = `  line ${at + 1}: value = changed(${h});`;
  hunks.push(
    `@@ ${lines[at - 4]!.trim()}\n ${lines[at - 3]}\n ${lines[at - 2]}\n ${lines[at - 1]}\n-${lines[at]}\n+${changed[at]}\n ${lines[at + 1]}\n ${lines[at + 2]}`,
  );
}
const patch = `*** Begin Patch\n*** Update File: src/big.ts\n${hunks.join("\n")}\n*** End Patch`;
const expected = `${changed.join("\n")}\n`;
const hunksOf = (text: string): PatchHunk[] => (parseApplyPatch(text)[0] as Extract<PatchOp, { kind: "update" }>).hunks;
const one = applyHunks(file, hunksOf(patch), "src/big.ts");
if (one !== expected) throw new Error("apply_patch bench: the patched file is not the expected one");
const ours = median(await timeRuns(RUNS, () => applyHunks(file, hunksOf(patch), "src/big.ts")));
const unified = createPatch("src/big.ts", file, expected);
const theirs = median(await timeRuns(RUNS, () => applyPatch(file, unified)));
console.log(
  `apply_patch, 50 hunks on a 10,000-line file (parse and apply): median ${ms(ours)}; the diff package applying the same unified diff: ${ms(theirs)} (ratio ${(ours / theirs).toFixed(2)}×)`,
);
target({
  name: "apply_patch, 50 hunks on a 10,000-line file",
  value: ours,
  unit: "ms",
  max: 20,
  baseline: { name: "the diff package's applyPatch", value: theirs },
});
