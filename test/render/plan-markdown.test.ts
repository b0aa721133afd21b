import { describe, expect, test } from "bun:test";
import { formatPlanMarkdown } from "../../render/plan-markdown.ts";
import { plan } from "../fixtures/sample-plan.ts";

describe("formatPlanMarkdown", () => {
  test("summary, numbered steps with ids and files, risks and questions", () => {
    expect(formatPlanMarkdown(plan)).toBe(
      [
        "## Plan",
        "",
        "Add a --json flag to `log` so scripts can read changesets.",
        "",
        "### Steps",
        "",
        "1. **Serialize changesets** (`s1`)",
        "   Add toJson(changeset) returning id, time, goal, status.",
        "   Keep field names stable.",
        "   Files: `core/changeset.ts`",
        "2. **Wire the flag** (`s2`)",
        "   Parse --json in the log command and print one JSON array.",
        "   Files: `modes/cli/commands/log.ts`, `modes/cli/args.ts`",
        "3. **Document it** (`s3`)",
        "   Mention --json in the README.",
        "   Files: `README.md`",
        "",
        "### Risks",
        "",
        "- Scripts may depend on the text output.",
        "",
        "### Open questions",
        "",
        "- Should the JSON include file lists?",
      ].join("\n"),
    );
  });

  test("empty risks and questions leave their sections out", () => {
    const md = formatPlanMarkdown({ ...plan, risks: [], openQuestions: [] });
    expect(md).not.toContain("### Risks");
    expect(md).not.toContain("### Open questions");
  });
});
