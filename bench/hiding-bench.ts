// planHiding before each sandboxed command: a fake home with a 50,000-entry toolchain
// directory on PATH (kept whole, so searched whole for denied entries) plus the real
// /etc. Cold (a fresh cache: every directory read), warm (the cache revalidated: inotify
// watches vouch for unchanged directories; without them, one lstat a directory), against
// the uncached plan measured in the same run. Then a cold and warm search of a
// 200,000-entry tree, the size a kept folder may really reach.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compilePolicy } from "../core/policy/policy.ts";
import { commandDenies, type HidingInput, planHiding, secretPaths } from "../core/sandbox/hiding.ts";
import { dirWatcher } from "../core/sandbox/dir-watch.ts";
import { ScanCache } from "../core/sandbox/scan-cache.ts";
import { check, median, ms, target, time, timeSync } from "./stats.ts";

const ENTRIES = 50_000;
const BIG_ENTRIES = 200_000;
const RUNS = 7;
const WARM_RUNS = 31;
const TARGET_WARM_MS = 5;

const base = realpathSync(mkdtempSync(join(tmpdir(), "pencil-hiding-bench-")));
const home = join(base, "home");
const ws = join(base, "ws");
const scratch = join(base, "scratch");
for (const d of [ws, scratch]) mkdirSync(d, { recursive: true });
writeFileSync(join(ws, "README.md"), "hi\n");

/**
 * A pyenv-like tree of about `entries` entries under `root`: packages of nested directories
 * with ten entries each (the real ~/.pyenv has 10.8 entries a directory), a few denied files.
 */
function makeToolchain(root: string, entries: number): { dirs: number } {
  let made = 0;
  let dirs = 0;
  for (let pkg = 0; made < entries; pkg++) {
    for (let sub = 0; sub < 10 && made < entries; sub++) {
      const dir = join(root, "versions/3.12.1/lib/python3.12/site-packages", `pkg${pkg}`, `mod${sub}`);
      mkdirSync(dir, { recursive: true });
      dirs++;
      made++;
      for (let f = 0; f < 9 && made < entries; f++, made++) writeFileSync(join(dir, `f${f}.py`), "");
    }
    if (pkg % 500 === 7)
      writeFileSync(join(root, "versions/3.12.1/lib/python3.12/site-packages", `pkg${pkg}`, ".env"), "x");
  }
  return { dirs };
}

const pyenv = join(home, ".pyenv");
mkdirSync(join(pyenv, "shims"), { recursive: true });
mkdirSync(join(pyenv, "libexec"), { recursive: true });
mkdirSync(join(pyenv, "bin"), { recursive: true });
for (const name of ["python", "python3", "pip", "pip3", "pydoc", "idle"]) writeFileSync(join(pyenv, "shims", name), "");
writeFileSync(join(pyenv, "libexec/pyenv"), "");
symlinkSync("../libexec/pyenv", join(pyenv, "bin/pyenv"));
const { dirs } = makeToolchain(pyenv, ENTRIES);

const pencilHome = join(home, ".pencil");
const policy = compilePolicy({ workspaceRoot: ws, home, pencilHome, rules: [] });
const denies = commandDenies(policy, secretPaths(home, pencilHome));
const input: HidingInput = {
  realHome: home,
  pencilHome,
  wsRoot: ws,
  scratchRoot: scratch,
  path: `${join(pyenv, "shims")}:${join(pyenv, "bin")}:/usr/local/bin:/usr/bin:/bin`,
  hidden: denies.hidden,
  hiddenKey: denies.key,
};

// A directory stamped within the last 2 s is read again every time (its stamps cannot vouch for it yet): let the new tree age.
Bun.sleepSync(2_100);

const uncached = timeSync(RUNS, () => planHiding({ ...input, scanCache: null }));
const cold = timeSync(RUNS, () => planHiding({ ...input, scanCache: new ScanCache() }));
const cache = new ScanCache();
const plan = planHiding({ ...input, scanCache: cache });
// Steady state: the cold runs' garbage (seven caches of 5,000 directories) collected, the reuse path compiled by the JIT.
for (let i = 0; i < 5; i++) planHiding({ ...input, scanCache: cache });
Bun.gc(true);
const warm = timeSync(WARM_RUNS, () => planHiding({ ...input, scanCache: cache }));
const lstatCache = new ScanCache({ watcher: null });
for (let i = 0; i < 5; i++) planHiding({ ...input, scanCache: lstatCache });
const warmLstat = timeSync(WARM_RUNS, () => planHiding({ ...input, scanCache: lstatCache }));
// The search part alone (the kept ~/.pyenv and /etc), and what is left (covers, the PATH walk, realpaths, sockets).
const searchOnly = timeSync(WARM_RUNS, () => {
  cache.below(pyenv, denies.key, denies.hidden);
  cache.below("/etc", denies.key, denies.hidden);
});
const rest = timeSync(WARM_RUNS, () =>
  planHiding({ ...input, systemDirs: [], path: "/usr/local/bin:/usr/bin:/bin", scanCache: cache }),
);
const counts = cache.below(pyenv, denies.key, denies.hidden);
const same = JSON.stringify(planHiding({ ...input, scanCache: null })) === JSON.stringify(plan);

console.log(`planHiding, a 50,000-entry kept toolchain (${dirs.toLocaleString("en")} directories) + the real /etc:`);
console.log(`  uncached (every directory read each time)  ${ms(median(uncached))}`);
console.log(`  cold (a fresh cache)                        ${ms(median(cold))}`);
console.log(
  `  warm                                        ${ms(median(warm))} (inotify watches: ${dirWatcher() ? "yes" : "no"})`,
);
console.log(`    of which the searches (~/.pyenv, /etc)    ${ms(median(searchOnly))}`);
console.log(
  `    a warm search of ~/.pyenv: ${counts.dirsChecked} directories lstat'ed, ${counts.dirsRead} read, ${counts.dirsReused} reused`,
);
console.log(`    the rest, no toolchain on PATH, no /etc   ${ms(median(rest))}`);
console.log(`  warm without watches (one lstat a directory) ${ms(median(warmLstat))}`);
target({
  name: "planHiding, warm, 50,000-entry toolchain on PATH + /etc",
  value: median(warm),
  unit: "ms",
  max: TARGET_WARM_MS,
  baseline: { name: "uncached", value: median(uncached) },
});
check("the cached plan equals the uncached one", same, same ? "equal" : "different", "equal");

const big = join(base, "big");
const { dirs: bigDirs } = makeToolchain(big, BIG_ENTRIES);
Bun.sleepSync(2_100);
const bigCache = new ScanCache();
const bigCold = time(() => bigCache.below(big, denies.key, denies.hidden));
const bigWarm = timeSync(5, () => bigCache.below(big, denies.key, denies.hidden));
const bigLstat = new ScanCache({ watcher: null });
bigLstat.below(big, denies.key, denies.hidden);
const bigWarmLstat = timeSync(5, () => bigLstat.below(big, denies.key, denies.hidden));
console.log(`A 200,000-entry kept folder (${bigDirs.toLocaleString("en")} directories), searched whole:`);
const bigCounts = bigCache.below(big, denies.key, denies.hidden);
console.log(
  `  cold ${ms(bigCold)}, warm ${ms(median(bigWarm))} (${bigCounts.dirsChecked} of them lstat'ed: those without a watch), warm without watches ${ms(median(bigWarmLstat))}`,
);

rmSync(base, { recursive: true, force: true });
