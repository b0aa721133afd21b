// What judging hard links costs a walk (search, list_files, the run_command copy):
// the policy's verdicts on 20,000 files plus one bare lstat each (the floor of any
// check that looks at the inode: the baseline), against the same verdicts plus the
// LinkGuard check, measured in the same run, on a tree without hard links and with
// 200 of them (where the index of the workspace's names is built once per walk).
import { linkSync, lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LinkGuard } from "../core/policy/hard-links.ts";
import { compilePolicy, decide } from "../core/policy/policy.ts";
import { median, ms, target, timeRuns } from "./stats.ts";

const DIRS = 200;
const FILES = 100;
const RUNS = 7;
/** The link check may cost at most this many times the bare-lstat baseline. */
const TARGET_RATIO = 3;

const base = realpathSync(mkdtempSync(join(tmpdir(), "pencil-hardlink-bench-")));
const home = join(base, "home");
const root = join(base, "ws");
mkdirSync(join(home, ".ssh"), { recursive: true });
writeFileSync(join(home, ".ssh", "id_ed25519"), "key\n");
const paths: string[] = [];
for (let d = 0; d < DIRS; d++) {
  mkdirSync(join(root, `d${d}`), { recursive: true });
  for (let f = 0; f < FILES; f++) {
    const p = join(root, `d${d}`, `f${f}.ts`);
    writeFileSync(p, "export {};\n");
    paths.push(p);
  }
}
const policy = compilePolicy({ workspaceRoot: root, home, pencilHome: join(home, ".pencil"), rules: [] });
const judge = (real: string) => decide(policy, { tool: "search", access: "read", real });

async function measure(label: string): Promise<void> {
  const floor = median(
    await timeRuns(RUNS, () => {
      for (const p of paths) {
        judge(p);
        lstatSync(p);
      }
    }),
  );
  const checked = median(
    await timeRuns(RUNS, () => {
      // A fresh guard per walk, as each run gets one: index building is part of the cost.
      const guard = new LinkGuard({ root, home });
      for (const p of paths) {
        judge(p);
        guard.judge(p, "read", judge);
      }
    }),
  );
  const ratio = checked / floor;
  console.log(
    `  ${label}: policy + hard-link check ${ms(checked)} (${((checked * 1000) / paths.length).toFixed(2)} µs a file); policy + bare lstat ${ms(floor)}: ${ratio.toFixed(2)}×`,
  );
  target({
    name: `hard-link check on a 20,000-file walk, ${label} (ratio)`,
    value: ratio,
    unit: "×",
    max: TARGET_RATIO,
    baseline: { name: "policy + bare lstat", value: floor, unit: "ms" },
  });
}

console.log(`hard-link check over a walk of ${paths.length.toLocaleString("en-US")} files, median of ${RUNS} runs`);
await measure("no hard links");
for (let i = 0; i < 200; i++) linkSync(paths[i * 100]!, join(root, `d${i}`, "linked.ts"));
linkSync(join(home, ".ssh", "id_ed25519"), join(root, "d0", "key.txt"));
await measure("200 linked pairs + one link to ~/.ssh");
rmSync(base, { recursive: true, force: true });
