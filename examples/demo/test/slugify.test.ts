import { expect, test } from "bun:test";
import { slugify } from "../src/index.ts";

test("slugify lowercases and joins words", () => {
  expect(slugify("Hello, World!")).toBe("hello-world");
});

test("slugify strips accents", () => {
  expect(slugify("Crème Brûlée")).toBe("creme-brulee");
});
