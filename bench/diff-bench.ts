// Rendering the review diff of a 10,000-line file with 200 scattered edits, against
// the bare line diff (diffLines, and structuredPatch) measured in the same run.
// Target: median ≤ 100 ms. Then pathological pairs (20,000 random lines on each
// side with nothing in common; a repetitive file with shifted content) must stay
// bounded by the time limit and come back with `fallback: true` where the diff gives up.
import { randomBytes } from "node:crypto";
import { diffLines, structuredPatch } from "diff";
import type { FileChange } from "../core/staging/changeset.ts";
import { sha256 } from "../core/hash.ts";
import { renderFileDiff } from "../render/diff-view.ts";
import { median, time } from "./stats.ts";

const RUNS = 7;
const TARGET_MS = 100;
const TIMEOUT_MS = 300;
/** Bound for a pathological render: the diff's time limit plus room for splitting and rendering. */
const PATHOLOGICAL_BOUND_MS = TIMEOUT_MS + 400;

const enc = (s: string) => new TextEncoder().encode(s);

function modify(before: string, after: string): FileChange {
  const b = enc(before);
  const a = enc(after);
  return {
    path: "src/big.ts",
    real: "/bench/src/big.ts",
    kind: "modify",
    base: { exists: true, hash: sha256(b), size: b.length, mode: 0o644 },
    after: { bytes: a, hash: sha256(a), mode: 0o644 },
    before: b,
    origins: [],
    models: ["bench"],
    flags: [],
    added: 0,
    removed: 0,
    binary: false,
    digest: "",
  };
}

function medianOf(fn: () => void): number {
  fn(); // warm-up, not counted
  return median(Array.from({ length: RUNS }, () => time(fn)));
}

/** Medians of several functions run round-robin, so a noisy machine slows them all alike. */
function mediansInterleaved(fns: (() => void)[]): number[] {
  for (const fn of fns) fn(); // warm-up, not counted
  const samples = fns.map((): number[] => []);
  for (let r = 0; r < RUNS; r++) for (const [i, fn] of fns.entries()) samples[i]!.push(time(fn));
  return samples.map(median);
}

// 10,000 code-like lines; 200 edits spread evenly (a third replaced, a third inserted, a third deleted).
const baseLines = Array.from(
  { length: 10_000 },
  (_, i) => `  const value${i} = compute(${i}, "${randomBytes(6).toString("hex")}"); // line ${i}`,
);
const editedLines: string[] = [];
baseLines.forEach((line, i) => {
  const edit = i % 50 === 25 ? Math.floor(i / 50) % 3 : -1;
  if (edit === 0) editedLines.push(line.replace("compute", "recompute"));
  else if (edit === 1) editedLines.push(line, `  log(${i});`);
  else if (edit !== 2) editedLines.push(line);
});
const before = baseLines.join("\n") + "\n";
const after = editedLines.join("\n") + "\n";
const change = modify(before, after);

let rendered = renderFileDiff(change, { color: true, timeoutMs: TIMEOUT_MS });
const [renderMs, diffLinesMs, structuredMs] = mediansInterleaved([
  () => void (rendered = renderFileDiff(change, { color: true, timeoutMs: TIMEOUT_MS })),
  () => void diffLines(before, after),
  () => void structuredPatch("a", "b", before, after, undefined, undefined, { context: 3 }),
]) as [number, number, number];
const hunks = rendered.text.split("\n").filter((l) => l.includes("@@ -")).length;

console.log(
  `10,000 lines, 200 edits: ${hunks} hunks, ${rendered.text.length.toLocaleString("en-US")} chars, fallback ${rendered.fallback}`,
);
console.log(`  renderFileDiff          median ${renderMs.toFixed(1)} ms over ${RUNS} runs`);
console.log(
  `  diffLines (baseline)    median ${diffLinesMs.toFixed(1)} ms   ratio ${(renderMs / diffLinesMs).toFixed(2)}x`,
);
console.log(
  `  structuredPatch         median ${structuredMs.toFixed(1)} ms   ratio ${(renderMs / structuredMs).toFixed(2)}x`,
);

const randomLines = (n: number) =>
  Array.from({ length: n }, () => randomBytes(12).toString("base64")).join("\n") + "\n";
const repetitive = Array.from({ length: 20_000 }, (_, i) => `item ${i % 7}`).join("\n") + "\n";
const shifted =
  Array.from({ length: 20_000 }, (_, i) => `item ${(i + 3) % 7}${i % 97 === 0 ? "!" : ""}`).join("\n") + "\n";
const cases: [string, FileChange][] = [
  ["20,000 random lines vs 20,000 others", modify(randomLines(20_000), randomLines(20_000))],
  ["20,000 repetitive lines, shifted and sprinkled", modify(repetitive, shifted)],
];

let pathologicalOk = true;
for (const [name, c] of cases) {
  let view = renderFileDiff(c, { color: true, timeoutMs: TIMEOUT_MS });
  const ms = medianOf(() => {
    view = renderFileDiff(c, { color: true, timeoutMs: TIMEOUT_MS });
  });
  const bounded = ms <= PATHOLOGICAL_BOUND_MS;
  pathologicalOk &&= bounded;
  console.log(
    `${name}: median ${ms.toFixed(1)} ms (bound ${PATHOLOGICAL_BOUND_MS} ms), fallback ${view.fallback}, ${view.text.length.toLocaleString("en-US")} chars`,
  );
}
const randomFallback = renderFileDiff(cases[0]![1], { color: false, timeoutMs: TIMEOUT_MS }).fallback;

console.log("");
console.log(
  `target render ≤ ${TARGET_MS} ms: ${renderMs <= TARGET_MS ? "met" : "NOT met"} (${renderMs.toFixed(1)} ms)`,
);
console.log(`pathological renders bounded (≤ ${PATHOLOGICAL_BOUND_MS} ms): ${pathologicalOk ? "met" : "NOT met"}`);
console.log(`random-vs-random falls back: ${randomFallback ? "met" : "NOT met"}`);
