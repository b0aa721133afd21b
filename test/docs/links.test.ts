import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { anchorsOf, brokenLinks } from "../support/markdown-links.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const root = join(import.meta.dir, "..", "..");
const pages = [
  join(root, "README.md"),
  ...readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(root, "docs", f)),
];

describe("the documentation's links", () => {
  test("every relative link and #anchor in README.md and docs/*.md resolves", () => {
    expect(brokenLinks(root, pages)).toEqual([]);
  });

  test("every page under docs/ is listed in docs/README.md", () => {
    const index = readFileSync(join(root, "docs", "README.md"), "utf8");
    const unlisted = readdirSync(join(root, "docs"))
      .filter((name) => name.endsWith(".md") && name !== "README.md")
      .filter((name) => !index.includes(`(${name})`) && !index.includes(`(${name}#`));
    expect(unlisted).toEqual([]);
  });

  test("no page speaks of what lies outside the repository or of how it was made", () => {
    const found = pages.flatMap((p) =>
      readFileSync(p, "utf8")
        .split("\n")
        .flatMap((line, i) =>
          /DESIGN\.md|\.\.\/shared\/|\bthe issue\b|\bthis round\b/i.test(line)
            ? [`${p.slice(root.length + 1)}:${i + 1}`]
            : [],
        ),
    );
    expect(found).toEqual([]);
  });
});

describe("the link checker", () => {
  const dir = tempDir("pencil-links-");
  writeTree(dir, {
    "README.md": [
      "# Title",
      "## Quick start",
      "## `pencil` commands, flags & keys",
      "## Quick start",
      "[ok](docs/a.md#the-heading) [ok](#quick-start-1) [ok](#pencil-commands-flags--keys)",
      "[gone](docs/missing.md) [bad anchor](docs/a.md#nope) [self](#nowhere)",
      "[out](../elsewhere.md) [web](https://example.com/x#y)",
      "```",
      "[in code](nothing.md)",
      "```",
      "`[inline code](nothing.md)`",
    ].join("\n"),
    "docs/a.md": "# A\n\n## The heading\n",
  });
  const found = brokenLinks(dir, [join(dir, "README.md"), join(dir, "docs", "a.md")]);

  test("GitHub's slugs: lower case, punctuation dropped, spaces to hyphens, repeats numbered", () => {
    expect([...anchorsOf(readFileSync(join(dir, "README.md"), "utf8"))]).toEqual([
      "title",
      "quick-start",
      "pencil-commands-flags--keys",
      "quick-start-1",
    ]);
  });

  test("reports a missing file, a missing anchor and a link out of the repository, nothing in code", () => {
    expect(found.map((b) => b.target)).toEqual(["docs/missing.md", "docs/a.md#nope", "#nowhere", "../elsewhere.md"]);
    expect(found.map((b) => `${b.file}:${b.line}`)).toEqual([
      "README.md:6",
      "README.md:6",
      "README.md:6",
      "README.md:7",
    ]);
  });
});
