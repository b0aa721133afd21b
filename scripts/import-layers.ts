// `bun scripts/import-layers.ts`: the house's one rule about imports, checked over the real import graph.
// Arrows point down only: a file imports its own folder or a lower layer, never a higher one, and no two
// files import each other through any path. Type-only imports count: a type import is still a dependency a
// reader must follow. Run by `npm run lint` and by test/house/import-layers.test.ts.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import ts from "typescript";

/**
 * The product's layers, lowest first. A file belongs to the longest folder of this list that holds it;
 * it may import files of its own layer or of any layer before it. docs/architecture.md explains each.
 */
export const LAYERS: readonly string[] = [
  "core/errors", // every error class, one per file: imports nothing but its own folder
  "core", // primitives: hashes, text, workspace paths, limits, where Pencil lives
  "core/policy", // decisions: paths, commands, MCP, secrets; the approver's question
  "core/git", // git run so it runs nothing the workspace configured
  "core/staging", // the overlay, changesets, flags, hunks
  "core/apply", // writing approved bytes: journal, recovery, undo
  "core/scratch", // the scratch copy a command runs in, and what it changed
  "core/sandbox", // the namespace sandbox around a command
  "net", // the network boundary: guard, proxy, the run's CA
  "ai", // models: resolution, fallback, scripted model
  "tools/edit", // what only the editing tools use
  "tools/search", // the search engines (ripgrep and JavaScript)
  "tools", // one tool per file
  "tools/web", // fetch_url and web_search
  "tools/mcp", // MCP servers' tools, confined
  "agent", // the loop: session, the policy seam, turn ends
  "brain", // the second brain (no UI)
  "app", // runs, sessions, review settling, the runtime
  "render", // text every front end shows
  "modes/web", // the review page
  "modes/telegram", // the phone
  "modes/cli", // the terminal (and the entry to every mode)
  "index.ts", // the program
];

/** The source folders and files the graph is built from (tests, benches and scripts may import anything). */
export const SOURCE_ROOTS: readonly string[] = [
  "index.ts",
  "agent",
  "ai",
  "app",
  "brain",
  "core",
  "modes",
  "net",
  "render",
  "tools",
];

/** Relative imports of each source file: workspace-relative path → the paths it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** One broken rule: an import that points up, or a circle of files. */
export type LayerProblem =
  | { kind: "upward"; from: string; to: string; fromLayer: string; toLayer: string }
  | { kind: "unlayered"; file: string }
  | { kind: "cycle"; files: string[] };

/** The layer a file belongs to: the longest LAYERS entry that is the file itself or one of its folders. */
export function layerOf(file: string, layers: readonly string[] = LAYERS): string | null {
  let best: string | null = null;
  for (const layer of layers) {
    if ((file === layer || file.startsWith(`${layer}/`)) && (best === null || layer.length > best.length)) best = layer;
  }
  return best;
}

/** Every upward import, every file outside the layers, and every cycle (strongly connected component) of the graph. */
export function layerProblems(graph: ImportGraph, layers: readonly string[] = LAYERS): LayerProblem[] {
  const problems: LayerProblem[] = [];
  const rank = new Map(layers.map((l, i) => [l, i]));
  for (const [from, targets] of graph) {
    const fromLayer = layerOf(from, layers);
    if (fromLayer === null) {
      problems.push({ kind: "unlayered", file: from });
      continue;
    }
    for (const to of targets) {
      const toLayer = layerOf(to, layers);
      if (toLayer === null) continue; // reported as its own file when it is a source
      if (rank.get(toLayer)! > rank.get(fromLayer)!) problems.push({ kind: "upward", from, to, fromLayer, toLayer });
    }
  }
  for (const files of cycles(graph)) problems.push({ kind: "cycle", files });
  return problems;
}

/** The strongly connected components of more than one file, or of one file importing itself (Tarjan). */
export function cycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** The import graph of the sources under `root`: each `.ts` file's relative imports (static, dynamic, type-only). */
export function importGraph(root: string, sources: readonly string[] = SOURCE_ROOTS): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const add = (rel: string) => {
    const text = readFileSync(join(root, rel), "utf8");
    const info = ts.preProcessFile(text, true, true);
    const targets = new Set<string>();
    for (const ref of info.importedFiles) {
      if (!ref.fileName.startsWith("./") && !ref.fileName.startsWith("../")) continue;
      const target = normalize(join(dirname(rel), ref.fileName));
      if (target.endsWith(".ts")) targets.add(target);
    }
    graph.set(rel, [...targets].sort());
  };
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) add(path);
    }
  };
  for (const source of sources) {
    if (source.endsWith(".ts")) add(source);
    else walk(source);
  }
  return graph;
}

/** The problems as lines a person can act on. */
export function describeProblems(problems: readonly LayerProblem[]): string[] {
  return problems.map((p) =>
    p.kind === "upward"
      ? `${p.from} imports ${p.to}: ${p.fromLayer} may not import ${p.toLayer}, a higher layer (move the shared part down, or the importer up)`
      : p.kind === "unlayered"
        ? `${p.file} is in no layer of scripts/import-layers.ts: put it in a layer's folder, or add the folder to LAYERS in its place`
        : `an import cycle: ${p.files.join(" → ")} (move what they share into a file both import)`,
  );
}

if (import.meta.main) {
  const root = join(import.meta.dir, "..");
  const graph = importGraph(root);
  const problems = layerProblems(graph);
  if (problems.length > 0) {
    for (const line of describeProblems(problems)) console.error(`import-layers: ${line}`);
    console.error(`import-layers: ${problems.length} problem(s); the rule is in docs/architecture.md`);
    process.exit(1);
  }
  const edges = [...graph.values()].reduce((n, t) => n + t.length, 0);
  console.log(`import-layers: ${graph.size} files, ${edges} imports, no upward import and no cycle`);
}
