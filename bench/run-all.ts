// Runs every benchmark in turn (each in its own process, so one's memory and JIT
// state cannot colour another's figures) and prints their output.
import { readdirSync } from "node:fs";
import { join } from "node:path";

const dir = import.meta.dir;
const only = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith("-bench.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = 0;
for (const file of benches) {
  console.log(`\n## ${file}`);
  const proc = Bun.spawnSync([process.execPath, join(dir, file)], { stdout: "inherit", stderr: "inherit" });
  if (proc.exitCode !== 0) {
    failed += 1;
    console.log(`(${file} exited ${proc.exitCode})`);
  }
}
process.exit(failed ? 1 : 0);
