// `bun index.ts --help`: median wall time and peak memory over repeated runs (target
// ≤ 60 ms), against a bare `bun -e ""` start measured in the same run.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median, ms, verdict } from "./stats.ts";

const RUNS = 21;
const index = join(import.meta.dir, "../index.ts");
const bun = process.execPath;

function measure(args: string[]): { times: number[]; rssKiB: number[] } {
  const times: number[] = [];
  const rssKiB: number[] = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const t0 = performance.now();
    // /usr/bin/time is not everywhere; Bun reports the child's peak RSS itself.
    const result = Bun.spawnSync([bun, ...args], { stdout: "pipe", stderr: "pipe" });
    const elapsed = performance.now() - t0;
    if (result.exitCode !== 0) throw new Error(`${args.join(" ")} failed: ${result.stderr.toString()}`);
    if (i < 2) continue; // warm the file cache
    times.push(elapsed);
    const usage = result.resourceUsage;
    if (usage) rssKiB.push(Number(usage.maxRSS) / 1024);
  }
  return { times, rssKiB };
}

// A second baseline: the smallest TypeScript program, which pays the transpile any TS CLI pays.
const trivial = join(mkdtempSync(join(tmpdir(), "pencil-startup-")), "trivial.ts");
writeFileSync(trivial, 'await Bun.write(Bun.stdout, "ok\\n");\n');
const help = measure([index, "--help"]);
const version = measure([index, "--version"]);
const bare = measure(["-e", ""]);
const ts = measure([trivial]);
const h = median(help.times);
const b = median(bare.times);
const mib = (kib: number[]) => (kib.length ? `${(median(kib) / 1024).toFixed(0)} MiB` : "n/a");
console.log(`bun index.ts --help: median ${ms(h)}, peak RSS ${mib(help.rssKiB)}`);
console.log(`bun index.ts --version: median ${ms(median(version.times))}`);
console.log(
  `baseline bun -e "": median ${ms(b)}, peak RSS ${mib(bare.rssKiB)}; --help costs ${ms(h - b)} over a bare start (${(h / b).toFixed(2)}×)`,
);
console.log(
  `baseline bun trivial.ts: median ${ms(median(ts.times))}; --help costs ${ms(h - median(ts.times))} over the smallest TypeScript program`,
);
console.log(`target ≤ 60 ms: ${verdict(h <= 60)}`);
