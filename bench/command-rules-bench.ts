// Command judging throughput: parse (tree-sitter-bash) + resolve wrappers + judge against
// 50 Run rules, on distinct command lines, against a baseline measured in the same run
// that only splits the line on whitespace and tests the same 50 regular expressions.
// The mix is 7 plain lines (parsed without tree-sitter, same result) to 1 that needs it.
import { compilePolicy, decide, parseRule, type Effect, type Rule } from "../core/policy/policy.ts";
import { loadShellParser } from "../core/policy/shell-parse.ts";
import { format, interleaved, median, target, timeRuns } from "./stats.ts";

const COMMANDS = 100_000;
const RUNS = 5;
const TARGET = 50_000;

await loadShellParser();
const ruleTexts: [Effect, string][] = [];
for (let i = 0; i < 15; i++) ruleTexts.push(["deny", `Run(tool-${i} delete*)`]);
for (let i = 0; i < 10; i++) ruleTexts.push(["ask", `Run(deploy-${i}*)`]);
for (let i = 0; i < 23; i++) ruleTexts.push(["allow", `Run(script-${i} *)`]);
ruleTexts.push(["deny", "Run(git push*)"], ["allow", "Run(git *)"]);
const rules: Rule[] = ruleTexts.map(([effect, text]) => parseRule(text, effect, "bench"));
const policy = compilePolicy({
  workspaceRoot: "/tmp",
  home: "/nonexistent-home",
  pencilHome: "/nonexistent-ph",
  rules,
});

const shapes = [
  (i: number) => `bun test test/file-${i}.test.ts`,
  (i: number) => `git -C . log --oneline -${i % 50}`,
  (i: number) => `timeout 5 git push origin branch-${i}`,
  (i: number) => `ls -la src/dir-${i} | grep -v node_modules | head -20`,
  (i: number) => `script-${i % 23} --flag value-${i} && echo done`,
  (i: number) => `FOO=${i} sh -c 'make build-${i} && npm test'`,
  (i: number) => `find . -name '*.ts' -newer file-${i} | xargs git add`,
  (i: number) => `g=git; $g push origin v${i}`,
];
/** Lines with expansions, redirections or substitutions: always parsed by tree-sitter. */
const treeShapes = [
  (i: number) => `g=git; $g push origin v${i}`,
  (i: number) => `echo "$(date)" > log-${i}.txt 2>&1`,
  (i: number) => `cat <<EOF | wc -l\nline ${i}\nEOF`,
];
// Distinct lines: no cache can help.
let lines = Array.from({ length: COMMANDS }, (_, i) => shapes[i % shapes.length]!(i));
const treeLines = Array.from({ length: COMMANDS }, (_, i) => treeShapes[i % treeShapes.length]!(i));
const compiled = rules.map(
  (r) => new RegExp(`^${r.pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[\\s\\S]*")}$`),
);

function judgeAll(): void {
  let sink = 0;
  for (const command of lines) sink += decide(policy, { tool: "run_command", access: "run", command }).decision.length;
  if (sink === 0) throw new Error("unreachable");
}

function baselineAll(): void {
  let sink = 0;
  for (const command of lines) {
    const text = command.trim().split(/\s+/).join(" ");
    for (const re of compiled) if (re.test(text)) sink++;
    sink++;
  }
  if (sink === 0) throw new Error("unreachable");
}

/** Commands a second, from the milliseconds one pass over the lines took. */
const rate = (msTaken: number) => COMMANDS / (msTaken / 1000);
// Judge and baseline in turns after a warm-up of each (JIT, regexes).
const runs = await interleaved(RUNS, { judged: judgeAll, base: baselineAll });
const judged = runs.judged.map(rate);
const base = runs.base.map(rate);
const all = lines;
lines = treeLines;
const treeRates = (await timeRuns(3, judgeAll)).map(rate);
lines = all;
const fmt = (x: number) => format(x, "/s");
const j = median(judged);
const b = median(base);
console.log(
  `command rules: parse + resolve + judge, ${rules.length} Run rules, ${COMMANDS.toLocaleString("en-US")} distinct lines per run, median of ${RUNS} runs`,
);
console.log(`  judged:   ${fmt(j)}   (runs: ${judged.map(fmt).join(", ")})`);
console.log(`  baseline: ${fmt(b)}   (whitespace split + the same regexes, no parser)`);
console.log(`  tree-sitter lines only ($x, $( ), > and heredocs): ${fmt(median(treeRates))}`);
console.log(`  ratio:    parsing costs ${(b / j).toFixed(1)}x the bare regex baseline`);
target({
  name: "parse + resolve + judge a command line, 50 Run rules",
  value: j,
  unit: "/s",
  min: TARGET,
  baseline: { name: "whitespace split + the same regexes", value: b },
});
