// Policy throughput: decisions per second with 50 mixed rules, against a baseline
// loop that only does the workspace/secret startsWith checks, measured in the same run.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compilePolicy, decide, parseRule, type AccessRequest, type Effect, type Rule } from "../core/policy/policy.ts";
import { format, interleaved, median, target } from "./stats.ts";

const DECISIONS = 1_000_000;
const RUNS = 5;
const TARGET = 200_000;

const base = realpathSync(mkdtempSync(join(tmpdir(), "pencil-policy-bench-")));
const home = join(base, "home");
const ws = join(base, "ws");
mkdirSync(join(home, ".pencil"), { recursive: true });
mkdirSync(join(ws, "src"), { recursive: true });

const ruleTexts: [Effect, string][] = [];
for (let i = 0; i < 12; i++) ruleTexts.push(["deny", `Edit(src/generated-${i}/**)`]);
for (let i = 0; i < 8; i++) ruleTexts.push(["deny", `Read(secrets-${i}/**/*.pem)`]);
for (let i = 0; i < 8; i++) ruleTexts.push(["ask", `Edit(packages/pkg-${i}/package.json)`]);
for (let i = 0; i < 6; i++) ruleTexts.push(["ask", `Read(docs/private-${i}/**)`]);
for (let i = 0; i < 6; i++) ruleTexts.push(["allow", `Read(../shared-lib-${i}/**)`]);
for (let i = 0; i < 4; i++) ruleTexts.push(["allow", `Read(~/notes-${i}/**/*.{md,txt})`]);
for (let i = 0; i < 6; i++) ruleTexts.push(["allow", `Run(bun test-${i}*)`]);
const rules: Rule[] = ruleTexts.map(([effect, text]) => parseRule(text, effect, "bench"));
const policy = compilePolicy({ workspaceRoot: ws, home, pencilHome: join(home, ".pencil"), rules });

const paths = [
  "src/index.ts",
  "src/deep/nested/module/file.ts",
  "src/generated-3/api.ts",
  "src/generated-11/x/y.ts",
  "secrets-2/certs/a.pem",
  "packages/pkg-5/package.json",
  "docs/private-1/plan.md",
  "README.md",
  ".env",
  "config/.env.local",
  ".env.example",
  ".git/config",
  ".git/objects/ab/cdef",
  ".pencil/settings.json",
  "node_modules/pkg/dist/index.js",
].map((p) => join(ws, p));
paths.push(
  join(base, "shared-lib-4/src/a.ts"),
  join(base, "other/file.txt"),
  join(home, "notes-2/a/b.md"),
  join(home, ".ssh/id_ed25519"),
);

const requests: AccessRequest[] = [];
for (const real of paths) {
  requests.push({ tool: "read_file", access: "read", real });
  requests.push({ tool: "edit_file", access: "write", real });
}
const n = requests.length;

function runPolicy(): void {
  let sink = 0;
  for (let i = 0; i < DECISIONS; i++) sink += decide(policy, requests[i % n]!).decision.length;
  if (sink === 0) throw new Error("unreachable");
}

// The floor any policy must pay: is the path inside the workspace, under a secret dir, an .env?
const rootSlash = ws + "/";
const secretDirs = [
  join(home, ".ssh") + "/",
  join(home, ".aws") + "/",
  join(home, ".gnupg") + "/",
  join(home, ".pencil") + "/",
];
function runBaseline(): void {
  let sink = 0;
  for (let i = 0; i < DECISIONS; i++) {
    const real = requests[i % n]!.real!;
    let v = real.startsWith(rootSlash) ? 1 : 2;
    for (const d of secretDirs) if (real.startsWith(d)) v = 3;
    if (real.includes("/.env")) v = 4;
    sink += v;
  }
  if (sink === 0) throw new Error("unreachable");
}

// In turns, after a warm-up of each (JIT and regexes).
const runs = await interleaved(RUNS, { policy: runPolicy, base: runBaseline });
const rate = (msTaken: number) => DECISIONS / (msTaken / 1000);
const policyRates = runs.policy.map(rate);
const baseRates = runs.base.map(rate);
rmSync(base, { recursive: true, force: true });

const fmt = (x: number) => format(x, "/s");
const p = median(policyRates);
const b = median(baseRates);
console.log(
  `policy decide(): ${rules.length} rules, ${DECISIONS.toLocaleString("en-US")} decisions per run over ${n} requests, median of ${RUNS} runs`,
);
console.log(`  policy:   ${fmt(p)} decisions   (runs: ${policyRates.map(fmt).join(", ")})`);
console.log(`  baseline: ${fmt(b)} checks      (startsWith/includes only)`);
console.log(`  ratio:    policy is ${(b / p).toFixed(1)}x slower than the bare baseline`);
target({
  name: "policy decisions with 50 rules",
  value: p,
  unit: "/s",
  min: TARGET,
  baseline: { name: "bare startsWith checks", value: b },
});
