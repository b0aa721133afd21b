import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { checkoutFiles, type LayoutProblem, layoutProblems, TEST_LAYOUT_RULE } from "../../scripts/test-layout.ts";

const CHECKOUT = join(import.meta.dir, "../..");

/** The problems as one line each, with the rule they break, so a failure says what is allowed. */
const said = (problems: LayoutProblem[]) => problems.map((p) => `${p.test}: ${p.reason}`);

describe("the house's rule for where a test goes", () => {
  test("Pencil's own tests mirror its sources", () => {
    const { tests, sources } = checkoutFiles(CHECKOUT);
    expect(tests.length).toBeGreaterThan(140);
    expect(sources).toContain("core/sandbox/scan-cache.ts");
    const problems = said(layoutProblems(tests, sources));
    if (problems.length > 0) console.error(`Out of place (${TEST_LAYOUT_RULE}):\n${problems.join("\n")}`);
    expect(problems).toEqual([]);
  });

  const sources = [
    "core/hash.ts",
    "core/sandbox/scan-cache.ts",
    "core/sandbox/hiding.ts",
    "core/staging/overlay.ts",
    "core/scratch/overlay.ts",
    "tools/run-command.ts",
    "tools/search/ripgrep.ts",
    "app/settings.ts",
  ];
  const table: { name: string; test: string; expected: string[] }[] = [
    {
      name: "a test named for its source file, in its mirror",
      test: "test/core/sandbox/scan-cache.test.ts",
      expected: [],
    },
    { name: "a root primitive's test at core's mirror", test: "test/core/hash.test.ts", expected: [] },
    { name: "a descriptive name in a mirrored folder", test: "test/core/sandbox/xdg-dirs.test.ts", expected: [] },
    { name: "a name a tool file starts, beside that tool", test: "test/tools/run-command-scan.test.ts", expected: [] },
    {
      name: "a file of a subfolder tested flat in its parent",
      test: "test/core/scan-cache.test.ts",
      expected: ["scan-cache.ts is in core/sandbox/: its test goes in test/core/sandbox/"],
    },
    {
      name: "a file tested in another layer's folder",
      test: "test/core/settings.test.ts",
      expected: ["settings.ts is in app/: its test goes in test/app/"],
    },
    {
      name: "a name two folders hold: either of them",
      test: "test/core/overlay.test.ts",
      expected: [
        "overlay.ts is in core/scratch/, core/staging/: its test goes in test/core/scratch/ or test/core/staging/",
      ],
    },
    { name: "…and in one of them it is home", test: "test/core/scratch/overlay.test.ts", expected: [] },
    {
      name: "a name that starts with a subfolder's file, flat in the parent",
      test: "test/core/hiding-scan.test.ts",
      expected: [
        "it is named for hiding.ts, which is in core/sandbox/ below test/core/: it goes in test/core/sandbox/",
      ],
    },
    {
      name: "the same start outside the parent says nothing",
      test: "test/app/hiding-report.test.ts",
      expected: [],
    },
    {
      name: "a folder with no source folder",
      test: "test/modes/brain/brain.test.ts",
      expected: ["there is no source folder modes/brain/"],
    },
    {
      name: "a test at test/'s own level",
      test: "test/everything.test.ts",
      expected: ["there is no source folder at test/'s level"],
    },
    { name: "behaviour suites keep their place", test: "test/behaviour/full-disk.test.ts", expected: [] },
    { name: "the terminal's end-to-end suites keep theirs", test: "test/modes/cli/cli-agent.test.ts", expected: [] },
    { name: "the phone's too", test: "test/modes/telegram/telegram-flow.test.ts", expected: [] },
    { name: "and the house's own", test: "test/house/test-layout.test.ts", expected: [] },
  ];
  for (const row of table) {
    test(row.name, () => {
      expect(layoutProblems([row.test], sources).map((p) => p.reason)).toEqual(row.expected);
    });
  }

  test("every test file the docs, benches and scripts name by its path exists", () => {
    const named = [
      "README.md",
      ...["docs", "bench", "scripts"].flatMap((dir) =>
        readdirSync(join(CHECKOUT, dir))
          .filter((f) => /\.(md|ts)$/.test(f))
          .map((f) => `${dir}/${f}`),
      ),
    ].flatMap((file) =>
      [...readFileSync(join(CHECKOUT, file), "utf8").matchAll(/test\/[\w./-]+\.test\.ts/g)].map(
        (m) => `${file}: ${m[0]}`,
      ),
    );
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((n) => !existsSync(join(CHECKOUT, n.slice(n.indexOf(": ") + 2))))).toEqual([]);
  });

  test("every problem is named by its test file, sorted", () => {
    const got = layoutProblems(["test/core/settings.test.ts", "test/core/scan-cache.test.ts"], sources);
    expect(got.map((p) => p.test)).toEqual(["test/core/scan-cache.test.ts", "test/core/settings.test.ts"]);
  });
});
