// Effectiveness: a scripted weak model replays the failure modes of
// bench/recovery-modes.ts through the real loop, on this tree and on a baseline
// checkout (the commit before the recovery work, unpacked with `git archive`;
// `--baseline=REF` picks another). Prints, per side, how many modes end with the
// correct file, how many with an answer carrying what the model needs, how many
// stuck, and how many staged wrong content. Target: after = no stuck, no wrong.
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MODES, replay, type ModeResult, type Verdict } from "./recovery-modes.ts";

/** The last commit before Pencil's recovery work (issue 8): today's behaviour for the "before" column. */
const DEFAULT_BASELINE = "e7ebf66";

const root = join(import.meta.dir, "..");
const ref = process.argv.find((a) => a.startsWith("--baseline="))?.slice("--baseline=".length) ?? DEFAULT_BASELINE;

const baselineDir = mkdtempSync(join(tmpdir(), "pencil-recovery-baseline-"));
let before: ModeResult[] | null = null;
try {
  const archive = Bun.spawnSync(["git", "-C", root, "archive", "--format=tar", ref], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (archive.exitCode !== 0) throw new Error(`git archive ${ref} failed: ${archive.stderr.toString().trim()}`);
  const untar = Bun.spawnSync(["tar", "-x", "-C", baselineDir], { stdin: archive.stdout, stderr: "pipe" });
  if (untar.exitCode !== 0) throw new Error(`tar failed: ${untar.stderr.toString().trim()}`);
  symlinkSync(join(root, "node_modules"), join(baselineDir, "node_modules"));
  before = await replay(baselineDir);
} catch (error) {
  console.log(`(no baseline: ${error instanceof Error ? error.message : String(error)})`);
} finally {
  rmSync(baselineDir, { recursive: true, force: true });
}
const after = await replay(root);

const mark: Record<Verdict, string> = { correct: "correct", recoverable: "answer", stuck: "stuck", wrong: "WRONG" };
console.log(`recovery: ${MODES.length} failure modes, scripted weak model, real loop and tools`);
console.log(`${"mode".padEnd(28)} ${"item".padEnd(5)} ${"before".padEnd(8)} after`);
for (let i = 0; i < MODES.length; i++) {
  const mode = MODES[i]!;
  console.log(
    `${mode.id.padEnd(28)} ${String(mode.item).padEnd(5)} ${(before ? mark[before[i]!.verdict] : "-").padEnd(8)} ${mark[after[i]!.verdict]}`,
  );
}
const count = (results: ModeResult[], v: Verdict) => results.filter((r) => r.verdict === v).length;
const line = (label: string, results: ModeResult[]) =>
  `${label}: ${count(results, "correct")} correct file, ${count(results, "recoverable")} recoverable answer, ${count(results, "stuck")} stuck, ${count(results, "wrong")} wrong content staged (of ${results.length})`;
if (before) console.log(line(`before (${ref})`, before));
console.log(line("after", after));
const ok = count(after, "stuck") === 0 && count(after, "wrong") === 0;
console.log(`target (every mode correct or recoverable, none wrong): ${ok ? "MET" : "NOT MET"}`);
process.exit(ok ? 0 : 1);
