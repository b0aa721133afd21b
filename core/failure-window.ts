// Where a failed command's output says what failed: the first line that a common test
// runner, compiler or linter writes for a failure, and the lines around it. A test
// script's output starts with its banner and ends with totals; what a person (and the
// model) needs is usually in the middle.

/** A failure line of a common tool, and which tool writes it (for tests and readers). */
const MARKERS: readonly { tool: string; line: RegExp }[] = [
  { tool: "TAP / node --test", line: /^\s*not ok \d+\b/ },
  { tool: "Jest / Vitest", line: /^\s*FAIL\s+\S/ },
  { tool: "Jest", line: /^\s*●\s+\S/ },
  { tool: "Vitest", line: /^\s*×\s+\S/ },
  { tool: "bun test", line: /^\s*\(fail\)\s+\S/ },
  { tool: "pytest", line: /^(FAILED|ERROR)\s+\S|^E\s{2,}\S|^_{3,} .+ _{3,}$/ },
  { tool: "go test", line: /^\s*--- FAIL:|^FAIL\s+\S+\s/ },
  { tool: "cargo / Rust", line: /panicked at\b|^error(\[E\d+\])?: / },
  { tool: "tsc", line: /\berror TS\d+:/ },
  { tool: "ESLint", line: /^\s+\d+:\d+\s+error\s+\S/ },
  { tool: "Biome", line: /^\S+:\d+:\d+ [\w/-]+ .*━━━/ },
  { tool: "an exception", line: /^\s*(Uncaught )?([A-Z]\w*Error|AssertionError|Exception)\b( \[\w+\])?:/ },
  { tool: "a stack trace", line: /^\s+at .+:\d+(:\d+)?\)?\s*$|^Traceback \(most recent call last\):/ },
];

/** The first failure line of `lines` (0-based) and the tool that writes it; null when there is none. */
export function firstFailure(lines: readonly string[]): { index: number; tool: string } | null {
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.length > 2000) continue;
    const marker = MARKERS.find((m) => m.line.test(line));
    if (marker) return { index, tool: marker.tool };
  }
  return null;
}

/** Lines shown before and after the failure line. */
const WINDOW_BEFORE = 2;
const WINDOW_AFTER = 14;

/** The range [start, end) of the lines around the first failure, or null. */
export function failureWindow(lines: readonly string[]): { start: number; end: number } | null {
  const failure = firstFailure(lines);
  if (!failure) return null;
  return {
    start: Math.max(0, failure.index - WINDOW_BEFORE),
    end: Math.min(lines.length, failure.index + WINDOW_AFTER + 1),
  };
}
