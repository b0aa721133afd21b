import { describe, expect, test } from "bun:test";
import { costOf, formatDollars, usageLine } from "../../app/run-cost.ts";

describe("cost: pure parts", () => {
  const prices = { "groq:a": { input: 0.15, output: 0.75 }, "openrouter:b": { input: 1, output: 2 } };
  test.each([
    [{ "groq:a": { inputTokens: 1_000_000, outputTokens: 0 } }, 0.15],
    [{ "groq:a": { inputTokens: 0, outputTokens: 2_000_000 } }, 1.5],
    [
      {
        "groq:a": { inputTokens: 1000, outputTokens: 1000 },
        "openrouter:b": { inputTokens: 1000, outputTokens: 1000 },
      },
      0.0039,
    ],
    // A local model is free; an unpriced cloud model makes the cost unknown.
    [{ "local:c": { inputTokens: 10, outputTokens: 10 } }, 0],
    [{ "groq:unpriced": { inputTokens: 10, outputTokens: 10 } }, null],
    [{}, 0],
    [{ "openrouter:x": { inputTokens: 10, outputTokens: 10, steps: 2, reportedSteps: 2, reportedCost: 0.003 } }, 0.003],
    [{ "openrouter:x": { inputTokens: 10, outputTokens: 10, steps: 2, reportedSteps: 1, reportedCost: 0.001 } }, null],
    [{ "groq:a": { inputTokens: 1_000_000, outputTokens: 0, steps: 1, reportedSteps: 1, reportedCost: 9 } }, 0.15],
  ])("costOf(%j)", (usage, expected) => {
    const cost = costOf(usage, prices);
    if (expected === null) expect(cost).toBeNull();
    else expect(cost!).toBeCloseTo(expected, 10);
  });
  test.each([
    [0.0003912, "$0.00039"],
    [0.15, "$0.15"],
    [1.5, "$1.50"],
    [0, "$0"],
  ])("formatDollars(%p) = %p", (n, text) => expect(formatDollars(n)).toBe(text));
  test("a model without a price makes the cost unknown, never a guess; a model name that is an Object key is not a price", () => {
    expect(usageLine({ "groq:unpriced": { inputTokens: 1200, outputTokens: 340 } }, prices)).toBe(
      "groq:unpriced · 1.2k in / 340 out · cost: no price set",
    );
    expect(usageLine({ "local:c": { inputTokens: 1200, outputTokens: 340 } }, prices)).toBe(
      "local:c · 1.2k in / 340 out · $0",
    );
    expect(costOf({ constructor: { inputTokens: 1, outputTokens: 1 } }, prices)).toBeNull();
  });
});
