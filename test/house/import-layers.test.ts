import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import {
  cycles,
  describeProblems,
  importGraph,
  layerOf,
  layerProblems,
  LAYERS,
  type ImportGraph,
} from "../../scripts/import-layers.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const CHECKOUT = join(import.meta.dir, "../..");

describe("the house's import rule", () => {
  test("Pencil's own sources: no import points up a layer, and no file reaches itself through imports", () => {
    const graph = importGraph(CHECKOUT);
    expect(graph.size).toBeGreaterThan(250);
    expect(describeProblems(layerProblems(graph))).toEqual([]);
  });

  test("a file belongs to the longest layer folder that holds it", () => {
    expect(layerOf("core/hash.ts")).toBe("core");
    expect(layerOf("core/policy/policy.ts")).toBe("core/policy");
    expect(layerOf("tools/edit/edit-match.ts")).toBe("tools/edit");
    expect(layerOf("tools/read-file.ts")).toBe("tools");
    expect(layerOf("modes/cli/commands/agent.ts")).toBe("modes/cli");
    expect(layerOf("index.ts")).toBe("index.ts");
    expect(layerOf("coreish/x.ts")).toBeNull();
    expect(LAYERS.indexOf("core")).toBeLessThan(LAYERS.indexOf("modes/cli"));
  });

  const table: { name: string; graph: Record<string, string[]>; expected: string[] }[] = [
    {
      name: "down and sideways within a layer are fine",
      graph: { "app/a.ts": ["core/b.ts", "app/c.ts"], "app/c.ts": [], "core/b.ts": [] },
      expected: [],
    },
    {
      name: "core importing a tool points up",
      graph: { "core/settings.ts": ["tools/tool.ts"], "tools/tool.ts": [] },
      expected: ["upward core/settings.ts tools/tool.ts"],
    },
    {
      name: "a root primitive importing its own subfolder points up",
      graph: { "core/walk.ts": ["core/policy/policy.ts"], "core/policy/policy.ts": [] },
      expected: ["upward core/walk.ts core/policy/policy.ts"],
    },
    {
      name: "two files of one layer importing each other are a cycle",
      graph: { "core/policy/a.ts": ["core/policy/b.ts"], "core/policy/b.ts": ["core/policy/a.ts"] },
      expected: ["cycle core/policy/a.ts,core/policy/b.ts"],
    },
    {
      name: "a long circle is found whole",
      graph: { "app/a.ts": ["app/b.ts"], "app/b.ts": ["app/c.ts"], "app/c.ts": ["app/a.ts"], "app/d.ts": ["app/a.ts"] },
      expected: ["cycle app/a.ts,app/b.ts,app/c.ts"],
    },
    { name: "a file outside every layer is named", graph: { "lib/x.ts": [] }, expected: ["unlayered lib/x.ts"] },
  ];
  for (const row of table) {
    test(row.name, () => {
      const graph: ImportGraph = new Map(Object.entries(row.graph));
      const got = layerProblems(graph).map((p) =>
        p.kind === "upward"
          ? `upward ${p.from} ${p.to}`
          : p.kind === "cycle"
            ? `cycle ${p.files.join(",")}`
            : `unlayered ${p.file}`,
      );
      expect(got).toEqual(row.expected);
    });
  }

  test("type-only, re-exported and lazily imported files count as imports", () => {
    const root = tempDir("pencil-layers-");
    writeTree(root, {
      "core/a.ts": 'import type { B } from "../app/b.ts";\nexport type A = B;\n',
      "core/c.ts": 'export { b } from "../app/b.ts";\n',
      "core/d.ts": 'export async function d() {\n  return await import("../app/b.ts");\n}\n',
      "app/b.ts": "export type B = 1;\nexport const b = 1;\n",
    });
    const graph = importGraph(root, ["core", "app"]);
    expect(graph.get("core/a.ts")).toEqual(["app/b.ts"]);
    expect(graph.get("core/c.ts")).toEqual(["app/b.ts"]);
    expect(graph.get("core/d.ts")).toEqual(["app/b.ts"]);
    expect(layerProblems(graph).filter((p) => p.kind === "upward")).toHaveLength(3);
    expect(cycles(graph)).toEqual([]);
  });
});
