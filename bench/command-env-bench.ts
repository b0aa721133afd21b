// What running a command in Pencil costs beside running it bare, as the owner would:
// A. `npm test` (a node:test suite) in a 2,000-file project: the bare command and run_command in the same run, the
//    commands after the run's first. Target: run_command's overhead ≤ 60 ms.
// B. The first command of a fresh process with a 130,000-entry toolchain root on PATH (the machine's pyenv when it has
//    one, else a made one): without the saved index (every process searches the root for secrets before its first
//    command), and with it (a process checks the last one's listings). Target: ≤ 300 ms with the index.
import { spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { compilePolicy, decide } from "../core/policy/policy.ts";
import { dirWatcher } from "../core/sandbox/dir-watch.ts";
import { sandboxAvailable } from "../core/sandbox/namespace.ts";
import { createRunCommandTool } from "../tools/run-command.ts";
import { toolContext } from "../test/support/tool-context.ts";
import { median, ms, skip, target } from "./stats.ts";

const RUNS = 7;
const CHILD_RUNS = 3;

/** A run_command tool over `root`, with the session's visibility (nothing outside the workspace). */
function commandTool(root: string, env: Record<string, string>, extra: { indexDir?: string; realHome?: string } = {}) {
  const t = toolContext(root);
  const policy = compilePolicy({
    workspaceRoot: t.ws.root,
    home: t.ws.home,
    pencilHome: join(root, "..", "ph"),
    rules: [],
  });
  t.ctx.visible = (real) => decide(policy, { tool: "run_command", access: "read", real }).decision === "allow";
  const tool = createRunCommandTool({ sandbox: "namespace", parentEnv: env, ...extra });
  return { run: (command: string) => t.run(tool, { command }), close: () => tool.close?.() };
}

if (process.argv[2] === "--first") {
  // Child of part B: one command, the first of this process; prints its milliseconds.
  const [, , , root, path, home, indexDir] = process.argv;
  const tool = commandTool(
    root!,
    { PATH: path!, HOME: home!, LANG: "C.UTF-8" },
    {
      realHome: home!,
      ...(indexDir ? { indexDir } : {}),
    },
  );
  const t0 = performance.now();
  const out = await tool.run("true");
  const took = performance.now() - t0;
  await tool.close();
  if (!out.includes("Exit code 0")) throw new Error(out);
  console.log(took.toFixed(1));
  process.exit(0);
}

if (!sandboxAvailable()) {
  const reason = "the namespace sandbox is not available here (unprivileged user namespaces)";
  skip("npm test through run_command, overhead over the bare command", reason);
  skip("first command of a process, toolchain root on PATH, with the saved index", reason);
  process.exit(0);
}
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
console.log(`load average at start: ${load()} (${navigator.hardwareConcurrency} cores)`);
const base = realpathSync(mkdtempSync(join(tmpdir(), "pencil-command-env-bench-")));
// Later commands skip the toolchains' lstat's under inotify watches; where the user's limit is used up (every program
// of the user's shares it) each command lstat's every directory of them instead, and A's figure says so.
const watches = dirWatcher()?.watch(base, lstatSync(base, { bigint: true }).dev) != null;
console.log(
  `inotify watches: ${watches ? "available" : "refused (the user's limit is used up by other programs): every later command lstat's each toolchain directory"}`,
);

// A. npm test in a 2,000-file project.
const project = join(base, "ws");
for (let i = 0; i < 2000; i++) {
  const dir = join(project, "src", `mod${i % 100}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `file${i}.js`), `export const v${i} = ${i};\n`);
}
mkdirSync(join(project, "test"));
writeFileSync(
  join(project, "package.json"),
  `${JSON.stringify({ name: "bench", version: "1.0.0", type: "module", scripts: { test: "node --test test/" } })}\n`,
);
writeFileSync(
  join(project, "test", "sum.test.js"),
  [
    'import { test } from "node:test";',
    'import assert from "node:assert";',
    'import { v1 } from "../src/mod1/file1.js";',
    'import { v2 } from "../src/mod2/file2.js";',
    'test("sum", () => assert.equal(v1 + v2, 3));',
    "",
  ].join("\n"),
);
const ownerEnv: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: homedir(),
  LANG: "C.UTF-8",
  npm_config_update_notifier: "false",
};
const tool = commandTool(project, ownerEnv);
const t0 = performance.now();
const first = await tool.run("npm test");
const firstMs = performance.now() - t0;
if (!first.includes("Exit code 0")) throw new Error(first);
const bare: number[] = [];
const pencil: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const b = performance.now();
  const r = spawnSync("bash", ["-c", "npm test"], { cwd: project, env: ownerEnv, stdio: ["ignore", "pipe", "pipe"] });
  bare.push(performance.now() - b);
  if (r.status !== 0) throw new Error(String(r.stdout));
  const p = performance.now();
  const out = await tool.run("npm test");
  pencil.push(performance.now() - p);
  if (!out.includes("Exit code 0")) throw new Error(out);
}
await tool.close();
const overhead = median(pencil) - median(bare);
console.log(`A. npm test in a 2,000-file project (node:test suite), ${RUNS} runs each, interleaved:`);
console.log(`  bare (bash -c, the owner's environment): median ${ms(median(bare))}`);
console.log(`  run_command, the run's first command: ${ms(firstMs)} (searches the toolchains on PATH for secrets)`);
console.log(
  `  run_command, later commands: median ${ms(median(pencil))} (${(median(pencil) / median(bare)).toFixed(2)}× bare)`,
);
target({
  name: "npm test through run_command, overhead over the bare command",
  value: overhead,
  unit: "ms",
  max: 60,
  baseline: { name: "bare npm test", value: median(bare) },
});
console.log(`  load average now: ${load()}`);

// B. The first command of a process, a 130,000-entry toolchain root on PATH.
const pyenv = join(homedir(), ".pyenv");
let home = homedir();
let shims = join(pyenv, "shims");
const realPyenv = spawnSync("bash", ["-c", `test -d ${pyenv}/versions && find ${pyenv} | wc -l`], { encoding: "utf8" });
let entries = Number(realPyenv.stdout.trim());
if (!(entries >= 100_000)) {
  home = join(base, "home");
  shims = join(home, ".pyenv", "shims");
  mkdirSync(shims, { recursive: true });
  for (let d = 0; d < 1300; d++) {
    const dir = join(home, ".pyenv", "versions", "3.12.0", "lib", `pkg${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 99; f++) writeFileSync(join(dir, `m${f}.py`), "");
  }
  entries = 1300 * 100 + 5;
}
const path = `${shims}:/usr/local/bin:/usr/bin:/bin`;
const small = join(base, "small");
mkdirSync(small);
writeFileSync(join(small, "README.md"), "hi\n");
const child = (indexDir: string | null) => {
  const r = spawnSync(process.execPath, [import.meta.path, "--first", small, path, home, indexDir ?? ""], {
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return Number(r.stdout.trim());
};
const bareTrue: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const b = performance.now();
  spawnSync("bash", ["-c", "true"], { env: { PATH: path } });
  bareTrue.push(performance.now() - b);
}
const noIndex = Array.from({ length: CHILD_RUNS }, () => child(null));
const indexDir = join(base, "index");
const cold = child(indexDir);
const warm = Array.from({ length: CHILD_RUNS }, () => child(indexDir));
console.log(
  `B. the first command of a fresh process, ${entries.toLocaleString("en")} entries in ${shims.replace(/\/shims$/, "")} on PATH (${CHILD_RUNS} processes each):`,
);
console.log(`  bare \`true\`: median ${ms(median(bareTrue))}`);
console.log(`  without the saved index (the whole search before the first command): median ${ms(median(noIndex))}`);
console.log(`  with the index, the first process ever (searches, then saves): ${ms(cold)}`);
console.log(
  `  with the index, later processes: median ${ms(median(warm))} (${(median(noIndex) / median(warm)).toFixed(1)}× faster)`,
);
target({
  name: `first command of a process, ${entries.toLocaleString("en")} entries on PATH, with the saved index`,
  value: median(warm),
  unit: "ms",
  max: 300,
  baseline: { name: "without the index", value: median(noIndex) },
});
console.log(`  load average at the end: ${load()}`);
rmSync(base, { recursive: true, force: true });
