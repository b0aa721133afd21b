import { expect, test } from "bun:test";
import { readingTime, wordCount } from "../src/index.ts";

test("wordCount counts words", () => {
  expect(wordCount("It's a small world, after all.")).toBe(6);
});

test("readingTime is at least one minute", () => {
  expect(readingTime("short")).toBe(1);
});
