import type { ScriptedStructured, ScriptedTurn } from "../ai/scripted-model.ts";

/** The goal the demo's scripted agent works on. */
export const DEMO_GOAL =
  "Add a maxLength option to slugify that cuts on a word boundary, document it in the README, and add a test.";

/** The scripted model's answer to the intent check of the demo's changeset (it does what the goal asks). */
export const DEMO_INTENT: ScriptedStructured[] = [{ json: { verdict: "matches", what: "" } }];

const DONE: ScriptedTurn = {
  text: "Done. slugify now takes `{ maxLength }` and cuts at the last whole word that fits (a single long word is cut hard). The README documents the option, and test/slugify-max-length.test.ts covers the three cases. All three changes are staged for your review.",
};

const REVISION_REPLY: ScriptedTurn = {
  text: "This demo's agent is scripted, so it cannot act on your reason; with a real model (pencil agent) it would now revise the rejected file and send it back for review. Nothing more is staged.",
};

/**
 * A realistic run on examples/demo, played by the scripted model through the real
 * tools, policy and overlay: search, read, a refused look at .env, two edits, a new
 * test, and a summary.
 */
export const DEMO_SCRIPT: ScriptedTurn[] = [
  {
    text: "I'll find where slugify is defined and used.",
    toolCalls: [{ name: "search", input: { pattern: "slugify", glob: "**/*.ts" } }],
  },
  {
    text: "Reading the implementation, the public exports and the README.",
    toolCalls: [
      { name: "read_file", input: { path: "src/slugify.ts" } },
      { name: "read_file", input: { path: "src/index.ts" } },
      { name: "read_file", input: { path: "README.md" } },
    ],
  },
  {
    text: "Let me check the local configuration too.",
    toolCalls: [{ name: "read_file", input: { path: ".env" } }],
  },
  {
    text: "The .env file is off limits, which is fine: the change needs no configuration. Adding the option.",
    toolCalls: [
      {
        name: "edit_file",
        input: {
          path: "src/slugify.ts",
          old_string: `/** Turns a title into a URL slug: lowercase ASCII words joined by "-". */
export function slugify(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\\u0300-\\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}`,
          new_string: `/** Options of slugify. */
export interface SlugifyOptions {
  /** Longest slug to return; a longer one is cut at the last whole word that fits. */
  maxLength?: number;
}

/** Turns a title into a URL slug: lowercase ASCII words joined by "-". */
export function slugify(text: string, options: SlugifyOptions = {}): string {
  const slug = text
    .normalize("NFKD")
    .replace(/[\\u0300-\\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  const max = options.maxLength;
  if (max === undefined || slug.length <= max) return slug;
  const cut = slug.slice(0, max + 1);
  const lastDash = cut.lastIndexOf("-");
  // No dash within the limit: a single long word is cut hard rather than dropped.
  return lastDash > 0 ? cut.slice(0, lastDash) : slug.slice(0, max);
}`,
        },
      },
      {
        name: "edit_file",
        input: {
          path: "README.md",
          old_string: "- `slugify(text)` — a URL slug: lowercase ASCII words joined by `-`.",
          new_string:
            "- `slugify(text, { maxLength })` — a URL slug: lowercase ASCII words joined by `-`;\n  with `maxLength`, cut at the last whole word that fits.",
        },
      },
    ],
  },
  {
    text: "Now a test for the new option.",
    toolCalls: [
      {
        name: "create_file",
        input: {
          path: "test/slugify-max-length.test.ts",
          content: `import { expect, test } from "bun:test";
import { slugify } from "../src/index.ts";

test("maxLength cuts on a word boundary", () => {
  expect(slugify("The quick brown fox jumps", { maxLength: 15 })).toBe("the-quick-brown");
});

test("maxLength leaves short slugs alone", () => {
  expect(slugify("Short title", { maxLength: 50 })).toBe("short-title");
});

test("a single long word is cut hard", () => {
  expect(slugify("Supercalifragilistic", { maxLength: 5 })).toBe("super");
});
`,
        },
      },
    ],
  },
  DONE,
  // A rejection with a reason comes back here: a scripted model cannot revise, so it says what a real one would do.
  ...Array.from({ length: 3 }, () => REVISION_REPLY),
];
