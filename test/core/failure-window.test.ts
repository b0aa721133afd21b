import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { failureWindow, firstFailure } from "../../core/failure-window.ts";
import { formatCommandReport, parseCommandReport } from "../../render/command-result.ts";

// A failed command shows the lines around the first failure of the common runners, not
// only its banner and totals.

const banner = [
  "> demo@1.0.0 test",
  "> the script",
  ...Array.from({ length: 30 }, (_, i) => `ok ${i + 1} - passes ${i}`),
];
const totals = ["# tests 40", "# pass 39", "# fail 1"];

const SAMPLES: [string, string[], string][] = [
  ["TAP", ["not ok 31 - adds", "  ---", "  expected: 3", "  actual: 2"], "not ok 31 - adds"],
  [
    "Jest file",
    ["FAIL src/sum.test.js", "  ● sum › adds", "    expect(received).toBe(expected)"],
    "FAIL src/sum.test.js",
  ],
  ["Jest test", ["  ● sum › adds", "", "    Expected: 3", "    Received: 2"], "● sum › adds"],
  ["Vitest", [" × src/sum.test.ts > adds 3ms", "   → expected 2 to be 3"], "× src/sum.test.ts > adds"],
  ["bun test", ["error: expect(received).toBe(expected)", "(fail) sum > adds [0.31ms]"], "error: expect(received)"],
  ["bun test alone", ["(fail) sum > adds [0.31ms]"], "(fail) sum > adds"],
  [
    "pytest",
    ["_______ test_adds _______", "E       assert 2 == 3", "FAILED tests/test_sum.py::test_adds"],
    "_______ test_adds",
  ],
  [
    "pytest E",
    ["    def test_adds():", ">       assert add(1, 1) == 3", "E       assert 2 == 3"],
    "E       assert 2 == 3",
  ],
  ["go test", ["--- FAIL: TestAdd (0.00s)", "    sum_test.go:9: got 2, want 3"], "--- FAIL: TestAdd"],
  ["cargo", ["thread 'tests::adds' panicked at src/lib.rs:9:5:", "assertion `left == right` failed"], "panicked at"],
  ["rustc", ["error[E0308]: mismatched types", " --> src/main.rs:2:18"], "error[E0308]"],
  ["tsc", ["src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'."], "error TS2322"],
  [
    "ESLint",
    ["/project/src/a.js", "  3:7  error  'x' is assigned a value but never used  no-unused-vars"],
    "3:7  error",
  ],
  ["Biome", ["src/a.ts:3:7 lint/correctness/noUnusedVariables ━━━━━━━━━━━━━━━━━━━━━━"], "lint/correctness"],
  [
    "exception",
    ["TypeError: Cannot read properties of undefined (reading 'x')", "    at run (/p/a.js:3:9)"],
    "TypeError: Cannot read",
  ],
  [
    "Python traceback",
    ["Traceback (most recent call last):", '  File "a.py", line 3, in <module>', "ZeroDivisionError: division by zero"],
    "Traceback",
  ],
];

function report(output: string[], exitCode = 1) {
  const text = ["$ npm test", `Exit code ${exitCode} after 1.20 s.`, "Output:", ...output, "No file changes."].join(
    "\n",
  );
  return parseCommandReport(text)!;
}

describe("the first failure of each runner", () => {
  test.each(SAMPLES)("%s", (_name, failure, marker) => {
    const lines = [...banner, ...failure, ...totals];
    const found = firstFailure(lines);
    expect(found).not.toBeNull();
    expect(lines[found!.index]).toContain(marker);
    const shown = formatCommandReport(report(lines), { color: false });
    // The failure's own lines are shown, and so are the totals; the passing lines in between are not.
    for (const line of failure) if (line.trim()) expect(shown).toContain(line.trim());
    for (const line of totals) expect(shown).toContain(line);
    expect(shown).not.toContain("passes 15");
    expect(shown).toMatch(/… \d+ more lines/);
  });

  test("ordinary output has no failure", () => {
    expect(firstFailure([...banner, "all good", ...totals])).toBeNull();
    expect(firstFailure(["The error handling is described in docs/errors.md", "see at least 3 tests"])).toBeNull();
  });

  test("a passing command shows only its first and last lines, even if a line looks like a failure", () => {
    const shown = formatCommandReport(report([...banner, "not ok 31 - skipped # TODO", ...totals], 0), {
      color: false,
    });
    expect(shown).not.toContain("not ok 31");
  });

  test("a failure near the start or the end joins the head or the tail, never shown twice", () => {
    const early = ["> demo@1.0.0 test", "not ok 1 - adds", "  expected: 3", ...banner, ...totals];
    const shown = formatCommandReport(report(early), { color: false });
    expect(shown.split("not ok 1 - adds").length).toBe(2);
    const window = failureWindow(early)!;
    expect(window.start).toBe(0);
  });

  test("node's own test runner, as Node 20 prints it: the assertion's expected and actual are shown", () => {
    const lines = readFileSync(join(import.meta.dir, "../fixtures/node-test-failure.txt"), "utf8")
      .trimEnd()
      .split("\n");
    const shown = formatCommandReport(report(lines), { color: false });
    expect(shown).toContain("not ok 16 - adds");
    expect(shown).toContain("expected: 3");
    expect(shown).toContain("actual: 2");
    expect(shown).toContain("# todo 0");
  });
});
