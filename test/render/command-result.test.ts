import { expect, test } from "bun:test";
import { formatCommandReport, parseCommandReport } from "../../render/command-result.ts";

test("a passing command with staged files: green exit 0, its own seconds, output and what it staged", () => {
  const text = [
    "$ bun test",
    "Exit code 0 after 1.25 s.",
    "Output:",
    "3 pass",
    "0 fail",
    "Staged edit: a.txt",
    "No file changes.",
  ].join("\n");
  const r = parseCommandReport(text)!;
  expect(r).toMatchObject({
    command: "bun test",
    end: "exit",
    exitCode: 0,
    seconds: 1.25,
    output: ["3 pass", "0 fail"],
  });
  const shown = formatCommandReport(r, { color: false });
  expect(shown).toBe("  ✓ $ bun test  exit 0 · 1.25s\n  │ 3 pass\n  │ 0 fail\n  · Staged edit: a.txt\n");
});

test("time-outs and signals are failures, shown in red", () => {
  const timedOut = parseCommandReport(
    "$ sleep 99\nTimed out after 120.0 s: the command and every process it started were killed.\nOutput: (none)\nIts file effects were discarded: nothing was staged. Run a narrower or faster command.",
  )!;
  expect(formatCommandReport(timedOut, { color: false })).toContain("✗ $ sleep 99  timed out · 120.0s");
  const red = formatCommandReport(
    parseCommandReport("$ false\nExit code 1 after 0.01 s.\nOutput: (none)\nNo file changes.")!,
    { color: true },
  );
  expect(red).toContain("\x1b[31m");
});

test("not a command report (a refusal, an error) is not parsed", () => {
  expect(parseCommandReport("Error: running `make` is denied.")).toBeNull();
});
