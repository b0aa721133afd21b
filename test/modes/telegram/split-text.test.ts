import { describe, expect, test } from "bun:test";
import { escapeHtml } from "../../../modes/telegram/html.ts";
import { splitAtLines } from "../../../modes/telegram/split-text.ts";

describe("splitting long text", () => {
  test("a 50 KB diff is cut at line boundaries into pieces under the limit, and nothing is lost", () => {
    const lines = Array.from({ length: 1500 }, (_, i) => `+line ${i} ${"x".repeat(i % 60)} <tag> & "quote"`);
    const diff = `a.txt  create  +1500 -0\n${lines.join("\n")}\n`;
    expect(diff.length).toBeGreaterThan(50_000);
    const pieces = splitAtLines(diff, 3796);
    expect(pieces.length).toBeGreaterThan(13);
    expect(pieces.join("")).toBe(diff);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(3796);
      expect(piece.endsWith("\n")).toBe(true);
      expect(escapeHtml(piece).length).toBeGreaterThan(piece.length); // escaping happens after the cut
    }
  });

  test("a line longer than the limit is cut inside, never inside a surrogate pair", () => {
    const long = "😀".repeat(3000);
    const pieces = splitAtLines(`${long}\nend`, 1001);
    expect(pieces.join("")).toBe(`${long}\nend`);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(1001);
      expect(piece.isWellFormed()).toBe(true);
    }
  });
});
