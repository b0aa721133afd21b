// Search speed on a 20,000-file tree: plain `rg -n` (the baseline, run here),
// our search tool with rg, and our search tool's JS fallback. Target: the tool
// with rg within 1.5x of plain rg. Run: ./node_modules/.bin/bun bench/search-bench.ts
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiskFileOps } from "../core/file-ops.ts";
import { Overlay } from "../core/staging/overlay.ts";
import { ReadLedger } from "../core/staging/read-ledger.ts";
import { findRipgrep } from "../tools/search/ripgrep.ts";
import { createSearchTool } from "../tools/search.ts";
import type { ToolContext } from "../tools/tool.ts";
import { DEFAULT_LIMITS } from "../core/tool-limits.ts";
import { openWorkspace } from "../core/workspace.ts";
import { check, interleaved, median, skip, target } from "./stats.ts";

const FILES = 20_000;
const RUNS = 5;
const TARGET = 1.5;
const PATTERNS = [
  { label: "rare identifier", pattern: "parseInvoiceLine" },
  { label: "common word", pattern: "TODO" },
];

/** Writes the tree: 20 packages x 10 modules x 100 files of code-like text, plus ignored build output. */
function generate(root: string): void {
  let seed = 1;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const names = [
    "user",
    "order",
    "invoice",
    "cart",
    "session",
    "token",
    "config",
    "report",
    "item",
    "price",
    "queue",
    "cache",
  ];
  const verbs = ["load", "save", "parse", "format", "validate", "fetch", "update", "render", "compute", "merge"];
  const ident = () =>
    verbs[rand(verbs.length)]! +
    cap(names[rand(names.length)]!) +
    (rand(3) === 0 ? cap(names[rand(names.length)]!) : "");
  const line = (): string => {
    switch (rand(9)) {
      case 0:
        return `import { ${ident()} } from "../${names[rand(names.length)]}/${names[rand(names.length)]}";`;
      case 1:
        return `export function ${ident()}(input: ${cap(names[rand(names.length)]!)}, options = {}) {`;
      case 2:
        return `  const ${names[rand(names.length)]} = await ${ident()}(input, { retries: ${rand(5)} });`;
      case 3:
        return rand(12) === 0
          ? `  // TODO: handle the empty ${names[rand(names.length)]} case`
          : `  // ${verbs[rand(verbs.length)]} the ${names[rand(names.length)]} before returning`;
      case 4:
        return `  if (!${names[rand(names.length)]}) throw new Error("missing ${names[rand(names.length)]}");`;
      case 5:
        return `  return ${names[rand(names.length)]}.map((v) => v.${names[rand(names.length)]} * ${rand(100)});`;
      case 6:
        return "}";
      case 7:
        return "";
      default:
        return `  ${names[rand(names.length)]}.${ident()}(${rand(1000)});`;
    }
  };
  // A git repository, as real code is: plain rg then honours the .gitignore too, as our tool always does.
  mkdirSync(join(root, ".git"));
  writeFileSync(join(root, ".git/HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(root, ".gitignore"), "dist/\n*.log\nnode_modules/\n");
  let written = 0;
  for (let p = 0; p < 20; p++) {
    for (let m = 0; m < 10; m++) {
      const dir = join(root, `packages/pkg${p}/src/mod${m}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < FILES / 200; f++) {
        const lines = Array.from({ length: 30 + rand(90) }, line);
        if (rand(400) === 0) lines[rand(lines.length)] = `  const rows = parseInvoiceLine(raw, ${rand(9)});`;
        writeFileSync(join(dir, `${names[f % names.length]}-${f}.ts`), lines.join("\n") + "\n");
        written++;
      }
    }
    // Ignored output that a search must not pay for.
    mkdirSync(join(root, `packages/pkg${p}/dist`), { recursive: true });
    writeFileSync(join(root, `packages/pkg${p}/dist/bundle.js`), "TODO parseInvoiceLine\n".repeat(2000));
  }
  if (written !== FILES) throw new Error(`generated ${written} files, expected ${FILES}`);
}

function cap(s: string): string {
  return s[0]!.toUpperCase() + s.slice(1);
}

/** Medians of RUNS runs of each contender, in turns (after a warm-up of each: page cache, JIT), each from a clean heap. */
async function medians<K extends string>(contenders: Record<K, () => Promise<unknown>>): Promise<Record<K, number>> {
  const times = await interleaved(RUNS, contenders, { gc: true });
  return Object.fromEntries(Object.entries<number[]>(times).map(([name, list]) => [name, median(list)])) as Record<
    K,
    number
  >;
}

async function plainRg(rg: string, root: string, pattern: string): Promise<void> {
  const proc = Bun.spawn([rg, "-n", pattern], { cwd: root, stdout: "pipe", stderr: "ignore" });
  await new Response(proc.stdout).arrayBuffer();
  await proc.exited;
}

function context(root: string): ToolContext {
  return {
    ws: openWorkspace(root),
    fs: new Overlay(new DiskFileOps()),
    reads: new ReadLedger(),
    call: { id: "bench", model: "bench" },
    limits: DEFAULT_LIMITS,
    visible: () => true,
  };
}

const root = mkdtempSync(join(tmpdir(), "pencil-search-bench-"));
try {
  const t0 = performance.now();
  generate(root);
  console.log(
    `search bench: ${FILES.toLocaleString("en-US")} files generated in ${(performance.now() - t0).toFixed(0)} ms; median of ${RUNS} runs each`,
  );
  const rg = findRipgrep();
  if (!rg)
    console.log("ripgrep (rg) is not on PATH: only the JS search is measured (install ripgrep for the baseline).");
  for (const { label, pattern } of PATTERNS) {
    const ctx = context(root);
    const viaJs = createSearchTool({ rgPath: null });
    if (!rg) {
      const { js } = await medians({ js: () => viaJs.execute({ pattern }, ctx) });
      console.log(`  ${label} (/${pattern}/): JS search ${js.toFixed(1)} ms`);
      skip(`search tool with rg over plain rg -n, ${label}`, "ripgrep (rg) is not on PATH (apt-get install ripgrep)");
      continue;
    }
    const viaRg = createSearchTool({ rgPath: rg });
    const same = (await viaRg.execute({ pattern }, ctx)) === (await viaJs.execute({ pattern }, ctx));
    const m = await medians({
      base: () => plainRg(rg, root, pattern),
      tool: () => viaRg.execute({ pattern }, ctx),
      js: () => viaJs.execute({ pattern }, ctx),
    });
    const [base, tool, js] = [m.base, m.tool, m.js];
    console.log(`  ${label} (/${pattern}/):`);
    console.log(`    plain rg -n        ${base.toFixed(1).padStart(8)} ms   1.00x (baseline)`);
    console.log(`    search tool, rg    ${tool.toFixed(1).padStart(8)} ms   ${(tool / base).toFixed(2)}x`);
    console.log(`    search tool, JS    ${js.toFixed(1).padStart(8)} ms   ${(js / base).toFixed(2)}x`);
    check(
      `the search tool's answer, ${label}: rg and the JS engine alike`,
      same,
      same ? "identical" : "different",
      "identical",
    );
    target({
      name: `search tool with rg over plain rg -n, ${label}, ${FILES.toLocaleString("en-US")} files`,
      value: tool / base,
      unit: "×",
      max: TARGET,
      baseline: { name: "plain rg -n", value: base, unit: "ms" },
    });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
