// `bun index.ts --help`: median wall time and peak memory over repeated runs (target
// ≤ 60 ms), against a bare `bun -e ""` start measured in the same run.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median, ms, type SpawnTimes, target, timeSpawns } from "./stats.ts";

const RUNS = 21;
const index = join(import.meta.dir, "../index.ts");
const bun = process.execPath;

// A second baseline: the smallest TypeScript program, which pays the transpile any TS CLI pays.
const trivial = join(mkdtempSync(join(tmpdir(), "pencil-startup-")), "trivial.ts");
writeFileSync(trivial, 'await Bun.write(Bun.stdout, "ok\\n");\n');
// Taken in turns, so a change in the machine's load falls on all four alike; Bun reports each child's peak RSS.
const [help, version, bare, ts] = timeSpawns(
  [
    [bun, index, "--help"],
    [bun, index, "--version"],
    [bun, "-e", ""],
    [bun, trivial],
  ],
  RUNS,
) as [SpawnTimes, SpawnTimes, SpawnTimes, SpawnTimes];
const h = median(help.wall);
const b = median(bare.wall);
const mib = (xs: number[]) => (xs.length ? `${median(xs).toFixed(0)} MiB` : "n/a");
console.log(`bun index.ts --help: median ${ms(h)}, peak RSS ${mib(help.rssMiB)}`);
console.log(`bun index.ts --version: median ${ms(median(version.wall))}`);
console.log(
  `baseline bun -e "": median ${ms(b)}, peak RSS ${mib(bare.rssMiB)}; --help costs ${ms(h - b)} over a bare start (${(h / b).toFixed(2)}×)`,
);
console.log(
  `baseline bun trivial.ts: median ${ms(median(ts.wall))}; --help costs ${ms(h - median(ts.wall))} over the smallest TypeScript program`,
);
target({ name: "bun index.ts --help", value: h, unit: "ms", max: 60, baseline: { name: 'bare bun -e ""', value: b } });
