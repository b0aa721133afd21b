// `bun scripts/test-layout.ts`: the house's rule for where a test file goes. Tests mirror the sources: a
// test of `core/sandbox/scan-cache.ts` is `test/core/sandbox/scan-cache.test.ts`, and one that covers
// several files of a folder takes a descriptive name in that folder's mirror. Suites of a behaviour
// (test/behaviour/), the front ends' end-to-end suites (test/modes/cli/, test/modes/telegram/) and the
// folders that test no source folder keep their own places. Run by `npm run lint` and by
// test/house/test-layout.test.ts.
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { SOURCE_ROOTS } from "./import-layers.ts";

/** Folders under test/ that do not mirror a source folder: their files may be named and placed freely. */
const OWN_PLACES: readonly string[] = [
  "test/behaviour", // one behaviour across many files: a crash, a full disk, the ways around the review
  "test/modes/cli", // the terminal's end-to-end suites
  "test/modes/telegram", // the phone's end-to-end suites
  "test/support", // shared setup: fakes, worlds
  "test/fixtures", // files the tests read
  "test/docs", // the docs' links
  "test/house", // the house rules themselves (scripts/)
  "test/packaging", // the npm package and the binary
  "test/bench", // bench/'s own helpers
];

/** What the rule allows, said in every failure. */
export const TEST_LAYOUT_RULE =
  "a test of <folder>/<file>.ts is test/<folder>/<file>.test.ts; a test of several files of one folder takes " +
  "another name in test/<folder>/; only test/behaviour, the front ends' suites (test/modes/cli, " +
  "test/modes/telegram) and test/{support,fixtures,docs,house,packaging,bench} do not mirror a source folder";

/** One test file in the wrong place: where it is, and why (with the folder it belongs in, when one file names it). */
export type LayoutProblem = { test: string; reason: string };

/**
 * The misplaced test files. `tests` are test file paths (`test/…/x.test.ts`), `sources` the source files
 * (`core/…/x.ts`), both relative to the checkout. A test file outside OWN_PLACES must sit in
 * `test/<folder>/` for a folder of `sources`; if its name is a source file's (`x.test.ts` for some `x.ts`),
 * that folder must be one holding `x.ts`.
 */
export function layoutProblems(tests: readonly string[], sources: readonly string[]): LayoutProblem[] {
  const folders = new Set(sources.map((s) => dirname(s)));
  const foldersOf = new Map<string, string[]>();
  for (const s of sources) {
    const name = s.slice(s.lastIndexOf("/") + 1).replace(/\.ts$/, "");
    foldersOf.set(name, [...(foldersOf.get(name) ?? []), dirname(s)]);
  }
  const problems: LayoutProblem[] = [];
  for (const test of [...tests].sort()) {
    if (OWN_PLACES.some((place) => test.startsWith(`${place}/`))) continue;
    const folder = dirname(test).replace(/^test\/?/, "");
    const name = test.slice(test.lastIndexOf("/") + 1).replace(/\.test\.tsx?$/, "");
    const homes = (foldersOf.get(name) ?? []).sort();
    const below = belowHomes(name, folder, foldersOf);
    if (homes.length > 0 && !homes.includes(folder)) {
      problems.push({
        test,
        reason: `${name}.ts is in ${listed(homes)}: its test goes in ${listed(homes, "test/", " or ")}`,
      });
    } else if (homes.length === 0 && below) {
      const [prefix, under] = below;
      problems.push({
        test,
        reason: `it is named for ${prefix}.ts, which is in ${listed(under)} below test/${folder}/: it goes in ${listed(under, "test/", " or ")}`,
      });
    } else if (!folders.has(folder)) {
      problems.push({ test, reason: `there is no source folder ${folder === "" ? "at test/'s level" : `${folder}/`}` });
    }
  }
  return problems;
}

/** `a/, b/` (or with a prefix and another separator). */
function listed(folders: readonly string[], prefix = "", separator = ", "): string {
  return folders.map((f) => `${prefix}${f}/`).join(separator);
}

/**
 * For a name like `hiding-scan` in `folder`: the longest dash-separated start of it that names source
 * files only in folders below `folder` (`hiding` → core/sandbox/ for test/core/), and those folders.
 */
function belowHomes(name: string, folder: string, foldersOf: ReadonlyMap<string, string[]>): [string, string[]] | null {
  const words = name.split("-");
  for (let n = words.length - 1; n >= 1; n--) {
    const prefix = words.slice(0, n).join("-");
    const homes = foldersOf.get(prefix) ?? [];
    const under = homes.filter((h) => folder === "" || h.startsWith(`${folder}/`)).sort();
    if (homes.length > 0 && !homes.includes(folder) && under.length > 0) return [prefix, under];
  }
  return null;
}

function filesUnder(root: string, dir: string, suffix: RegExp): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(root, path, suffix));
    else if (suffix.test(entry.name)) out.push(path);
  }
  return out;
}

/** The checkout's test files and source files, relative to `root`, as layoutProblems takes them. */
export function checkoutFiles(root: string): { tests: string[]; sources: string[] } {
  const sources = SOURCE_ROOTS.filter((r) => !r.endsWith(".ts")).flatMap((r) => filesUnder(root, r, /(?<!\.d)\.ts$/));
  return { tests: filesUnder(root, "test", /\.test\.tsx?$/), sources };
}

if (import.meta.main) {
  const { tests, sources } = checkoutFiles(process.cwd());
  const problems = layoutProblems(tests, sources);
  for (const p of problems) console.error(`${p.test}: ${p.reason}`);
  if (problems.length > 0) {
    console.error(`\n${problems.length} test file(s) out of place: ${TEST_LAYOUT_RULE}.`);
    process.exit(1);
  }
  console.log(`${tests.length} test files, each where the sources say`);
}
