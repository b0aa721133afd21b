// Apply and undo of 1,000 approved 10 KB files, against plain writeFileSync of the
// same files in the same run. Targets: apply ≤ 1 s, undo ≤ 1 s. Also measures an
// fsync per file (the `fsyncFiles` option) to show whether it is affordable.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyChangeset } from "../core/apply/apply.ts";
import type { Changeset } from "../core/staging/changeset.ts";
import { undoApply } from "../core/apply/undo.ts";
import { makeChangeset } from "../test/fixtures/apply-changeset.ts";
import { median, ms, target, time } from "./stats.ts";

const FILES = 1000;
const SIZE = 10 * 1024;
const RUNS = 5;
const FSYNC_RUNS = 3;

const base = realpathSync(mkdtempSync(join(tmpdir(), "pencil-apply-bench-")));
const root = join(base, "ws");

/** 10 KB of text per file, different per index and per version. */
function content(i: number, version: string): Uint8Array {
  const line = `${version} file ${i}: the quick brown fox jumps over the lazy dog\n`;
  return new TextEncoder().encode(line.repeat(Math.ceil(SIZE / line.length)).slice(0, SIZE));
}

const paths = Array.from({ length: FILES }, (_, i) => `src/dir${i % 20}/file${String(i).padStart(4, "0")}.ts`);
const oldBytes = paths.map((_, i) => content(i, "old"));
const newBytes = paths.map((_, i) => content(i, "new"));

function resetWorkspace(): void {
  rmSync(root, { recursive: true, force: true });
  for (let d = 0; d < 20; d++) mkdirSync(join(root, "src", `dir${d}`), { recursive: true });
  for (const [i, p] of paths.entries()) writeFileSync(join(root, p), oldBytes[i]!);
}

/** The changeset the overlay would build: bases hashed from the disk as it is now. */
function changeset(): Changeset {
  return makeChangeset(
    root,
    paths.map((path, i) => ({ path, after: newBytes[i]!, mode: 0o644 })),
    "cs-bench",
  );
}

const baseline: number[] = [];
const baselineCreate: number[] = [];
const apply: number[] = [];
const undo: number[] = [];
const applyFsync: number[] = [];

for (let run = 0; run < RUNS; run++) {
  resetWorkspace();
  baseline.push(
    time(() => {
      for (const [i, p] of paths.entries()) writeFileSync(join(root, p), newBytes[i]!);
    }),
  );
  // Atomic writes create a new inode per file; this is the cost of that alone, for reference.
  baselineCreate.push(
    time(() => {
      for (const [i, p] of paths.entries()) writeFileSync(join(root, `${p}.new`), newBytes[i]!);
    }),
  );

  resetWorkspace();
  const journalDir = join(base, `journal-${run}`);
  const cs = changeset();
  let applyId: string | null = null;
  apply.push(time(() => (applyId = applyChangeset({ changeset: cs, approved: paths, journalDir }).applyId)));
  let reverted = 0;
  undo.push(time(() => (reverted = undoApply(journalDir, applyId!).reverted.length)));
  if (reverted !== FILES) throw new Error(`undo reverted ${reverted} of ${FILES} files`);
}

for (let run = 0; run < FSYNC_RUNS; run++) {
  resetWorkspace();
  const cs = changeset();
  applyFsync.push(
    time(() =>
      applyChangeset({
        changeset: cs,
        approved: paths,
        journalDir: join(base, `journal-fsync-${run}`),
        fsyncFiles: true,
      }),
    ),
  );
}

rmSync(base, { recursive: true, force: true });

const b = median(baseline);
const created = median(baselineCreate);
const a = median(apply);
const u = median(undo);
const f = median(applyFsync);
const col = (x: number) => ms(x).padStart(11);
console.log(
  `apply-bench: ${FILES} files of ${SIZE / 1024} KB, median of ${RUNS} runs (${FSYNC_RUNS} for fsync per file)`,
);
console.log(`  baseline writeFileSync     ${col(b)}   (overwriting the existing files)`);
console.log(
  `  writeFileSync, new files   ${col(created)}   ${(created / b).toFixed(1)}x baseline (the inode creation every atomic write pays)`,
);
console.log(`  apply (checks + journal)   ${col(a)}   ${(a / b).toFixed(1)}x baseline`);
console.log(`  undo                       ${col(u)}   ${(u / b).toFixed(1)}x baseline`);
console.log(`  apply + fsync per file     ${col(f)}   ${(f / b).toFixed(1)}x baseline   ${(f / a).toFixed(1)}x apply`);
const baselineWrite = { name: "writeFileSync overwrite", value: b };
target({ name: "apply 1,000 files (checks + journal)", value: a, unit: "ms", max: 1000, baseline: baselineWrite });
target({ name: "undo of them", value: u, unit: "ms", max: 1000, baseline: baselineWrite });
target({ name: "apply 1,000 files, fsync per file", value: f, unit: "ms", max: 1000, baseline: baselineWrite });
