// The review page for a 1,000-file changeset in headless Chromium: first contentful paint
// (median of fresh loads; the file list is drawn before any diff is fetched) and the
// server's resident memory, against a bare page of the same server (its 403 text) painted
// in the same run. Target: first paint ≤ 500 ms. Needs /usr/bin/chromium.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildChangeset, newChangesetId } from "../core/staging/changeset.ts";
import { ChangesetStore } from "../core/staging/changeset-store.ts";
import { DiskFileOps } from "../core/file-ops.ts";
import { Overlay } from "../core/staging/overlay.ts";
import { openWorkspace } from "../core/workspace.ts";
import { HAVE_CHROMIUM, launchChromium, startWebReview } from "../test/support/review-page.ts";
import { tempDir } from "../test/support/temp.ts";
import { finish, median, skip, target } from "./stats.ts";

const FILES = 1000;
const RUNS = 5;
const TARGET_MS = 500;

if (!HAVE_CHROMIUM) {
  skip("review page first paint, 1,000 files", "/usr/bin/chromium is not installed (apt-get install chromium)");
  process.exit(0);
}

const root = tempDir("pencil-bench-ws-");
const home = tempDir("pencil-bench-home-");
const pencilHome = join(home, ".pencil");
const overlay = new Overlay(new DiskFileOps());
const origin = { tool: "write_file", callId: "c", model: "bench", readsBefore: [] };
const body = Array.from({ length: 40 }, (_, i) => `export const v${i} = ${i};\n`).join("");
for (let f = 0; f < FILES; f++) {
  const dir = join(root, `src/m${Math.floor(f / 50)}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `f${f}.ts`), body);
  overlay.writeBytes(
    join(dir, `f${f}.ts`),
    new TextEncoder().encode(body.replace("v3 = 3", `v3 = ${f}`).replace("v30 = 30", "v30 = 0")),
    { origin },
  );
}
const ws = openWorkspace(root);
const cs = buildChangeset({
  id: newChangesetId(),
  goal: "renumber",
  workspace: ws,
  staged: overlay.list(),
  readDisk: (r) => readFileSync(r),
});
new ChangesetStore(pencilHome).save(cs);

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, PENCIL_HOME: pencilHome, NO_COLOR: "1" };
const review = await startWebReview([cs.id, "-w", root], { cwd: root, env });
const browser = await launchChromium();
const fcp = async (url: string, ready: string) => {
  const page = await browser.newPage();
  await page.goto(url);
  await page.locator(ready).first().waitFor();
  const paint = (await page.evaluate(
    "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1",
  )) as number;
  await page.close();
  return paint;
};
const first = await fcp(review.url, "nav#files li");
const loads: number[] = [];
for (let i = 0; i < RUNS; i++) loads.push(await fcp(`${review.origin}/`, "nav#files li"));
// The baseline: the same server's 403 text, in a context without the session.
const bare = await browser.browser()?.newContext();
const baseline: number[] = [];
if (bare) {
  for (let i = 0; i < RUNS; i++) {
    const page = await bare.newPage();
    await page.goto(`${review.origin}/api/state`);
    baseline.push(
      (await page.evaluate("performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1")) as number,
    );
    await page.close();
  }
}
const pid = Number(readFileSync("/proc/self/stat", "utf8").split(" ")[0]);
const rss = (() => {
  try {
    const status = readFileSync(`/proc/${review.pid}/status`, "utf8");
    return Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
  } catch {
    return Number.NaN;
  }
})();
const m = median(loads);
const b = baseline.length ? median(baseline) : Number.NaN;
console.log(`review page: ${FILES} files (bench pid ${pid})`);
console.log(
  `  first contentful paint  first load ${first.toFixed(0)} ms (with the token's redirect), median of ${RUNS} loads ${m.toFixed(0)} ms`,
);
console.log(
  `  baseline (a plain 403 page of the same server)  median ${b.toFixed(0)} ms  → ratio ${(m / b).toFixed(2)}×`,
);
console.log(`  server memory (VmRSS of pencil review --web)  ${rss.toFixed(0)} MB`);
const plain403 = { name: "a plain 403 page of the same server", value: b };
target({ name: "review page first paint, 1,000 files", value: m, unit: "ms", max: TARGET_MS, baseline: plain403 });
target({
  name: "review page first paint, the first load (the token's redirect)",
  value: first,
  unit: "ms",
  max: TARGET_MS,
  baseline: plain403,
});
await browser.close();
review.kill();
await review.exited;
finish();
