// Scratch copy cost for run_command: a workspace of 2,000 files (+ a shared
// node_modules of 5,000 files and a git repository), against `cp -a` of the
// workspace files (node_modules and .git left out: the copy shares the one and
// copies the other without its object store) measured in the same run, and
// against an unsafe hard-link tree (what a copy costs when in-place writes could
// reach the real files).
import { spawnSync } from "node:child_process";
import { linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { DiskFileOps } from "../core/file-ops.ts";
import { Overlay } from "../core/staging/overlay.ts";
import { ReadLedger } from "../core/staging/read-ledger.ts";
import { diffScratch } from "../core/scratch/diff.ts";
import { disposeScratch } from "../core/scratch/dispose.ts";
import { KeptScratch } from "../core/scratch/kept.ts";
import { makeScratch } from "../core/scratch/make.ts";
import type { ShareMode } from "../core/scratch/types.ts";
import { planHiding } from "../core/sandbox/hiding.ts";
import { runIn, sandboxAvailable } from "../core/sandbox/namespace.ts";
import { createRunCommandTool, useOverlay } from "../tools/run-command.ts";
import type { ToolContext } from "../tools/tool.ts";
import { DEFAULT_LIMITS } from "../core/tool-limits.ts";
import { openWorkspace } from "../core/workspace.ts";
import { median, skip, target, timeRuns, timeSync } from "./stats.ts";

const FILES = 2000;
const DEP_FILES = 5000;
const RUNS = 7;

const base = realpathSync(mkdtempSync(join(tmpdir(), "pencil-scratch-bench-")));
const root = join(base, "ws");
const scratchParent = join(base, "scratch");
mkdirSync(scratchParent);
let seed = 1;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
for (let i = 0; i < FILES; i++) {
  const dir = join(root, "src", `mod${i % 100}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `file${i}.ts`), "x".repeat(200 + Math.floor(rand() * 4000)) + "\n");
}
for (let i = 0; i < DEP_FILES; i++) {
  const dir = join(root, "node_modules", `pkg${i % 250}`, "lib");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `m${i}.js`), "module.exports = 1;\n");
}
writeFileSync(join(root, ".gitignore"), "node_modules/\n");
const hasGit = spawnSync("git", ["-C", root, "init", "-q"]).status === 0;
if (hasGit) {
  spawnSync("git", ["-C", root, "add", "-A"]);
  spawnSync("git", ["-C", root, "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "bench"]);
}

const ws = openWorkspace(root);
const overlay = new Overlay(new DiskFileOps());
for (let i = 0; i < 10; i++)
  overlay.writeBytes(join(root, "src", "mod1", `staged${i}.ts`), new TextEncoder().encode(`staged ${i}\n`));
const visible = () => true;

/** Median milliseconds of RUNS calls of `fn`. */
const time = (fn: () => void) => median(timeSync(RUNS, fn));
const timeAsync = async (fn: () => Promise<unknown>) => median(await timeRuns(RUNS, fn));

/** Baseline 1: cp -a of the workspace without node_modules and .git. */
const cpA = time(() => {
  const dest = join(scratchParent, "cp");
  mkdirSync(dest);
  for (const name of readdirSync(root))
    if (name !== "node_modules" && name !== ".git") spawnSync("cp", ["-a", join(root, name), dest]);
  rmSync(dest, { recursive: true, force: true });
});

/** Baseline 2: a hard-link tree (unsafe: an in-place write would reach the real file). */
function linkTree(from: string, to: string): void {
  mkdirSync(to);
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name === ".git") continue;
    if (e.isDirectory()) linkTree(join(from, e.name), join(to, e.name));
    else if (e.isFile()) linkSync(join(from, e.name), join(to, e.name));
  }
}
const hardlinks = time(() => {
  const dest = join(scratchParent, "ln");
  linkTree(root, dest);
  rmSync(dest, { recursive: true, force: true });
});

const modes: ShareMode[] = sandboxAvailable() ? ["plain", "namespace"] : ["plain"];
const setup: Record<string, number> = {};
const diff: Record<string, number> = {};
const dispose: Record<string, number> = {};
for (const share of modes) {
  const setups: number[] = [];
  const diffs: number[] = [];
  const disposes: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let t = performance.now();
    const s = await makeScratch(ws, { fs: overlay, visible, share, parent: scratchParent });
    setups.push(performance.now() - t);
    t = performance.now();
    const changes = diffScratch(s, DEFAULT_LIMITS.maxFileBytes);
    diffs.push(performance.now() - t);
    if (changes.length !== 0) throw new Error(`bench: an untouched copy reported ${changes.length} changes`);
    t = performance.now();
    disposeScratch(s);
    disposes.push(performance.now() - t);
  }
  setup[share] = median(setups);
  diff[share] = median(diffs);
  dispose[share] = median(disposes);
}

const ctx: ToolContext = {
  ws,
  fs: overlay,
  reads: new ReadLedger(),
  call: { id: "bench", model: "bench" },
  limits: DEFAULT_LIMITS,
  visible,
};
const endToEnd: Record<string, number> = {};
for (const share of modes) {
  const tool = createRunCommandTool({ sandbox: share, scratchParent, scratch: "copy" });
  endToEnd[share] = await timeAsync(() => tool.execute({ command: "true" }, ctx));
}
// Copy-on-write: the namespace's overlay scratch, against the copy above (measured in the same run).
const cow = modes.includes("namespace") && useOverlay(ws.root, { scratchParent });
/** The second command of a run (its kept scratch refreshed, not made), and the parts of it Pencil does itself. */
const second: { cmd?: number; edited?: number; refresh?: number; plan?: number; run?: number; diff?: number } = {};
if (cow) {
  const overlayTool = () => createRunCommandTool({ sandbox: "namespace", scratchParent, scratch: "overlay" });
  const probe = overlayTool();
  await probe.execute({ command: "true" }, ctx); // the one-time probe of the overlay
  await probe.close?.();
  // The first command of a run: a new tool (toolsFor makes one per run), its scratch made, then removed as the run ends.
  const firsts: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const tool = overlayTool();
    const t = performance.now();
    await tool.execute({ command: "true" }, ctx);
    firsts.push(performance.now() - t);
    await tool.close?.();
  }
  endToEnd.overlay = median(firsts);
  const tool = overlayTool();
  await tool.execute({ command: "true" }, ctx);
  second.cmd = await timeAsync(() => tool.execute({ command: "true" }, ctx));
  // With a file the agent edited between the commands (edit_file), laid into the kept scratch before the next one.
  let n = 0;
  second.edited = await timeAsync(async () => {
    overlay.writeBytes(join(root, "src", "mod1", "staged0.ts"), new TextEncoder().encode(`edit ${n++}\n`));
    await tool.execute({ command: "true" }, ctx);
  });
  await tool.close?.();
  // Pencil's own part of a second command: the refresh of the kept scratch and the diff after it.
  const kept = KeptScratch.open(ws, overlay, scratchParent);
  const refreshes: number[] = [];
  const plans: number[] = [];
  const runs: number[] = [];
  const diffs: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    let t = performance.now();
    const s = kept.prepare(visible);
    if (i > 0) refreshes.push(performance.now() - t);
    t = performance.now();
    const hiding = planHiding({
      realHome: homedir(),
      pencilHome: join(homedir(), ".pencil"),
      wsRoot: ws.root,
      scratchRoot: s.root,
      path: process.env.PATH ?? "",
    });
    if (i > 0) plans.push(performance.now() - t);
    t = performance.now();
    await runIn(s, "true", {}, hiding);
    if (i > 0) runs.push(performance.now() - t);
    t = performance.now();
    const changes = diffScratch(s, DEFAULT_LIMITS.maxFileBytes);
    if (i > 0) diffs.push(performance.now() - t);
    kept.settle(s, changes, () => false);
    kept.release(s);
  }
  await kept.idle();
  kept.dispose();
  second.refresh = median(refreshes);
  second.plan = median(plans);
  second.run = median(runs);
  second.diff = median(diffs);
}
// The cost of hiding the real home (cover, kept toolchain, masked secrets): the same run with no home to cover, and the plan alone.
const noHome = modes.includes("namespace")
  ? await timeAsync(() =>
      createRunCommandTool({
        sandbox: "namespace",
        scratchParent,
        scratch: "copy",
        realHome: join(base, "no-home"),
      }).execute({ command: "true" }, ctx),
    )
  : null;
const plan = time(() =>
  planHiding({
    realHome: homedir(),
    pencilHome: join(homedir(), ".pencil"),
    wsRoot: ws.root,
    scratchRoot: scratchParent,
    path: process.env.PATH ?? "",
  }),
);
const bare = await timeAsync(
  () =>
    new Promise((resolve) =>
      Bun.spawn(["bash", "-c", "true"], { cwd: root, onExit: resolve, stdio: ["ignore", "ignore", "ignore"] }),
    ),
);

// The diff after a command that changed 10 files of a 20,000-file workspace: the overlay walks only its upper layer
// (what the command changed), the copy walks the whole tree (measured in the same run).
const BIG = 20_000;
const bigRoot = join(base, "big");
for (let i = 0; i < BIG; i++) {
  const dir = join(bigRoot, "src", `mod${i % 400}`);
  if (i < 400) mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `file${i}.ts`), `export const v${i} = ${i};\n`);
}
const bigWs = openWorkspace(bigRoot);
const bigView = new Overlay(new DiskFileOps());
/** What a command that changed 10 files leaves: 5 edited, 5 created, written into `dir` (the copy, or the upper layer). */
function changeTen(dir: string): void {
  for (let i = 0; i < 5; i++) {
    mkdirSync(join(dir, "src", `mod${i}`), { recursive: true });
    writeFileSync(join(dir, "src", `mod${i}`, `file${i}.ts`), `export const v${i} = "changed";\n`);
    writeFileSync(join(dir, "src", `mod${i}`, `new${i}.ts`), "new\n");
  }
}
const bigDiff: Record<string, number> = {};
for (const kind of cow ? ["copy", "overlay"] : ["copy"]) {
  const values: number[] = [];
  for (let i = 0; i < (kind === "copy" ? 3 : RUNS); i++) {
    const kept = kind === "overlay" ? KeptScratch.open(bigWs, bigView, scratchParent) : null;
    const s = kept
      ? kept.prepare(visible)
      : await makeScratch(bigWs, { fs: bigView, visible, share: "namespace", parent: scratchParent });
    changeTen(s.overlay ? s.overlay.upper : s.dir);
    const t = performance.now();
    const changes = diffScratch(s, DEFAULT_LIMITS.maxFileBytes);
    values.push(performance.now() - t);
    if (changes.length !== 10) throw new Error(`bench: ${kind} diff found ${changes.length} changes, not 10`);
    if (kept) kept.dispose();
    else disposeScratch(s);
  }
  bigDiff[kind] = median(values);
}

const fileCount = (dir: string): number => {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? fileCount(join(dir, e.name)) : 1;
  return n;
};
const gitFiles = hasGit && lstatSync(join(root, ".git")).isDirectory() ? fileCount(join(root, ".git")) : 0;

const f = (ms: number) => `${ms.toFixed(1)} ms`;
console.log(
  `scratch-bench: ${FILES} workspace files (+10 staged), node_modules of ${DEP_FILES} files shared, .git of ${gitFiles} files; median of ${RUNS} runs`,
);
console.log(`  baseline cp -a (no node_modules, .git) ${f(cpA)}`);
console.log(`  baseline hard-link tree (unsafe)      ${f(hardlinks)}`);
for (const share of modes) {
  console.log(
    `  makeScratch ${share.padEnd(9)}                ${f(setup[share]!)}   (${(setup[share]! / cpA).toFixed(2)}× cp -a, ${(setup[share]! / hardlinks).toFixed(2)}× hard links)`,
  );
  console.log(`  diffScratch ${share.padEnd(9)} (no change)    ${f(diff[share]!)}`);
  console.log(`  disposeScratch ${share.padEnd(9)}             ${f(dispose[share]!)}`);
  console.log(
    `  run_command "true" ${share.padEnd(9)} end to end ${f(endToEnd[share]!)}   (${(endToEnd[share]! / bare).toFixed(1)}× a bare bash -c true: ${f(bare)})`,
  );
}
if (endToEnd.overlay !== undefined) {
  console.log(
    `  run_command "true" namespace, copy-on-write overlay, first command of a run ${f(endToEnd.overlay)}   (the copy: ${f(endToEnd.namespace!)}, ${(endToEnd.namespace! / endToEnd.overlay).toFixed(1)}× faster)`,
  );
  console.log(
    `  run_command "true" namespace, copy-on-write overlay, second command of a run ${f(second.cmd!)}   (first: ${f(endToEnd.overlay)})`,
  );
  console.log(`    …with a file edited by the agent between the commands ${f(second.edited!)}`);
  console.log(
    `    its parts: the refresh of the kept scratch ${f(second.refresh!)}, planHiding ${f(second.plan!)}, the namespace runner (runIn) ${f(second.run!)}, the diff ${f(second.diff!)}`,
  );
}
for (const kind of Object.keys(bigDiff))
  console.log(`  diff after 10 changed files of ${BIG}, ${kind.padEnd(7)} ${f(bigDiff[kind]!)}`);
if (noHome !== null) {
  console.log(
    `  run_command "true" namespace, no home to hide ${f(noHome)}   (hiding the home costs ${f(endToEnd.namespace! - noHome)}, ${(endToEnd.namespace! / noHome).toFixed(2)}×)`,
  );
}
console.log(`  planHiding (covers, PATH walk, secrets) ${f(plan)}`);
const noOverlay = "needs the namespace sandbox and its copy-on-write overlay, not available here";
if (endToEnd.overlay !== undefined) {
  const copy = { name: "the copy", value: endToEnd.namespace! };
  target({
    name: 'run_command "true", sandboxed, first command of a run',
    value: endToEnd.overlay,
    unit: "ms",
    max: 100,
    baseline: copy,
  });
  target({
    name: 'run_command "true", sandboxed, second command of a run',
    value: second.cmd!,
    unit: "ms",
    max: 60,
    baseline: { name: "the first command", value: endToEnd.overlay },
  });
} else {
  skip('run_command "true", sandboxed, first command of a run', noOverlay);
  skip('run_command "true", sandboxed, second command of a run', noOverlay);
}
if (bigDiff.overlay !== undefined)
  target({
    name: `diff after a command changed 10 files of ${BIG.toLocaleString("en-US")}`,
    value: bigDiff.overlay,
    unit: "ms",
    max: 20,
    baseline: { name: "the copy's full-tree diff", value: bigDiff.copy! },
  });
else skip(`diff after a command changed 10 files of ${BIG.toLocaleString("en-US")}`, noOverlay);
rmSync(base, { recursive: true, force: true });
