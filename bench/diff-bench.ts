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
import { check, interleaved, median, target, timeRuns } from "./stats.ts";

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
// Round-robin, so a noisy machine slows them all alike.
const samples = await interleaved(RUNS, {
  render: () => void (rendered = renderFileDiff(change, { color: true, timeoutMs: TIMEOUT_MS })),
  diffLines: () => void diffLines(before, after),
  structured: () => void structuredPatch("a", "b", before, after, undefined, undefined, { context: 3 }),
});
const [renderMs, diffLinesMs, structuredMs] = [
  median(samples.render),
  median(samples.diffLines),
  median(samples.structured),
];
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

const pathological: { name: string; ms: number; fallback: boolean }[] = [];
for (const [name, c] of cases) {
  let view = renderFileDiff(c, { color: true, timeoutMs: TIMEOUT_MS });
  const render = () => void (view = renderFileDiff(c, { color: true, timeoutMs: TIMEOUT_MS }));
  const ms = median(await timeRuns(RUNS, render, 1));
  pathological.push({ name, ms, fallback: view.fallback });
  console.log(
    `${name}: median ${ms.toFixed(1)} ms (bound ${PATHOLOGICAL_BOUND_MS} ms), fallback ${view.fallback}, ${view.text.length.toLocaleString("en-US")} chars`,
  );
}
const randomFallback = renderFileDiff(cases[0]![1], { color: false, timeoutMs: TIMEOUT_MS }).fallback;

console.log("");
target({
  name: "render 10,000 lines with 200 edits",
  value: renderMs,
  unit: "ms",
  max: TARGET_MS,
  baseline: { name: "diffLines alone", value: diffLinesMs },
});
for (const p of pathological)
  target({ name: `render ${p.name} (bounded: never hangs)`, value: p.ms, unit: "ms", max: PATHOLOGICAL_BOUND_MS });
check(
  "20,000 random lines vs 20,000 others falls back to the plain view",
  randomFallback,
  `fallback ${randomFallback}`,
  "fallback true",
);
