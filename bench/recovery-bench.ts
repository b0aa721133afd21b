// Effectiveness: a scripted weak model replays failure modes through the real
// loop, on this tree and on baseline checkouts (unpacked with `git archive`):
// bench/recovery-modes.ts (search near-misses, edits, repairs; baseline: the
// commit before that recovery work, `--baseline=REF` picks another) and
// bench/finish-modes.ts (the end of a turn, content, argument shapes, gpt-oss's
// habits, context budget, loops, over the provider's HTTP protocol; baseline:
// the commit before that work, `--finish-baseline=REF`). Prints, per side, how
// many modes end with the correct file, with an answer carrying what the model
// needs, with a generic answer (or none), and with wrong content staged.
// Target: after = none generic, none wrong.
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FINISH_MODES, type FinishVerdict, replayFinish } from "./finish-modes.ts";
import { MODES, replay } from "./recovery-modes.ts";
import { finish, target } from "./stats.ts";

/** The last commit before Pencil's first recovery work: the "before" column of the recovery modes. */
const DEFAULT_BASELINE = "e7ebf66";
/** The last commit before the end-of-turn work: the "before" column of the finish modes. */
const DEFAULT_FINISH_BASELINE = "ba2c1d0";

const root = join(import.meta.dir, "..");
const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

/** Runs `play` on a checkout of `ref` (node_modules linked from this tree); null with a printed reason when it cannot. */
async function onCheckout<T>(ref: string, play: (dir: string) => Promise<T>): Promise<T | null> {
  const dir = mkdtempSync(join(tmpdir(), "pencil-recovery-baseline-"));
  try {
    const archive = Bun.spawnSync(["git", "-C", root, "archive", "--format=tar", ref], {
      stdout: "pipe",
      stderr: "pipe",
    });
    if (archive.exitCode !== 0) throw new Error(`git archive ${ref} failed: ${archive.stderr.toString().trim()}`);
    const untar = Bun.spawnSync(["tar", "-x", "-C", dir], { stdin: archive.stdout, stderr: "pipe" });
    if (untar.exitCode !== 0) throw new Error(`tar failed: ${untar.stderr.toString().trim()}`);
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
    return await play(dir);
  } catch (error) {
    console.log(`(no baseline ${ref}: ${error instanceof Error ? error.message : String(error)})`);
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const mark: Record<FinishVerdict, string> = {
  correct: "correct",
  recoverable: "answer",
  generic: "generic",
  wrong: "WRONG",
};
const count = (results: { verdict: FinishVerdict }[], v: FinishVerdict) =>
  results.filter((r) => r.verdict === v).length;
const line = (label: string, results: { verdict: FinishVerdict }[]) =>
  `${label}: ${count(results, "correct")} correct, ${count(results, "recoverable")} recoverable, ${count(results, "generic")} generic, ${count(results, "wrong")} wrong (of ${results.length})`;

function table(
  name: string,
  title: string,
  modes: { id: string; item: number | string }[],
  ref: string,
  before: { verdict: FinishVerdict }[] | null,
  after: { verdict: FinishVerdict }[],
): void {
  console.log(title);
  console.log(`${"mode".padEnd(34)} ${"item".padEnd(5)} ${"before".padEnd(8)} after`);
  modes.forEach((mode, i) =>
    console.log(
      `${mode.id.padEnd(34)} ${String(mode.item).padEnd(5)} ${(before ? mark[before[i]!.verdict] : "-").padEnd(8)} ${mark[after[i]!.verdict]}`,
    ),
  );
  if (before) console.log(line(`before (${ref})`, before));
  console.log(line("after", after));
  const stuck = (results: { verdict: FinishVerdict }[]) => count(results, "generic") + count(results, "wrong");
  target({
    name: `${name}: modes ending generic or wrong, of ${after.length}`,
    value: stuck(after),
    unit: "count",
    max: 0,
    ...(before ? { baseline: { name: `the commit before the work (${ref})`, value: stuck(before) } } : {}),
  });
}

const ref = arg("baseline", DEFAULT_BASELINE);
const finishRef = arg("finish-baseline", DEFAULT_FINISH_BASELINE);
table(
  "recovery",
  `recovery: ${MODES.length} failure modes, scripted weak model, real loop and tools`,
  MODES,
  ref,
  await onCheckout(ref, (dir) => replay(dir)),
  await replay(root),
);
console.log("");
table(
  "finish",
  `finish: ${FINISH_MODES.length} failure modes over the provider's HTTP protocol (Groq client → local server), real loop and tools`,
  FINISH_MODES,
  finishRef,
  await onCheckout(finishRef, (dir) => replayFinish(dir)),
  await replayFinish(root),
);
finish();
