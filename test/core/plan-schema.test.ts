import { describe, expect, test } from "bun:test";
import { zodSchema } from "ai";
import { planSchema, planToGoal } from "../../core/plan-schema.ts";
import { plan } from "../fixtures/sample-plan.ts";

describe("plan schema", () => {
  test("a plan without risks, questions or files gets empty lists", () => {
    const parsed = planSchema.parse({
      summary: "Tiny fix.",
      steps: [{ id: "s1", title: "Fix", detail: "Fix the typo." }],
    });
    expect(parsed).toEqual({
      summary: "Tiny fix.",
      steps: [{ id: "s1", title: "Fix", detail: "Fix the typo.", files: [] }],
      risks: [],
      openQuestions: [],
    });
  });

  test("a plan needs a summary and at least one step, and step ids must be unique", () => {
    expect(planSchema.safeParse({ summary: "x", steps: [] }).success).toBe(false);
    expect(planSchema.safeParse({ steps: [{ id: "s1", title: "t", detail: "d" }] }).success).toBe(false);
    const dup = planSchema.safeParse({
      summary: "x",
      steps: [
        { id: "s1", title: "a", detail: "d" },
        { id: "s1", title: "b", detail: "d" },
      ],
    });
    expect(dup.success).toBe(false);
    expect(dup.error!.issues[0]!.message).toContain('Step id "s1" is used twice');
    expect(dup.error!.issues[0]!.path).toEqual(["steps", 1, "id"]);
  });

  test("the JSON schema the model sees carries the descriptions and the required fields", () => {
    const schema = zodSchema(planSchema).jsonSchema as {
      required: string[];
      properties: Record<
        string,
        {
          description?: string;
          minItems?: number;
          items?: { required: string[]; properties: Record<string, { description?: string }> };
        }
      >;
    };
    expect(schema.required).toEqual(["summary", "steps"]);
    expect(schema.properties.steps!.minItems).toBe(1);
    expect(schema.properties.steps!.items!.required).toEqual(["id", "title", "detail"]);
    for (const field of ["id", "title", "detail", "files"]) {
      expect(schema.properties.steps!.items!.properties[field]!.description!.length).toBeGreaterThan(20);
    }
    for (const field of ["summary", "steps", "risks", "openQuestions"]) {
      expect(schema.properties[field]!.description!.length).toBeGreaterThan(20);
    }
  });
});

describe("planToGoal", () => {
  test("the chosen steps, in plan order, with detail and files; the left-out step is named as not to do", () => {
    const goal = planToGoal(plan, ["s2", "s1"]);
    expect(goal).toBe(
      [
        "Carry out the chosen steps (2 of 3) of the following plan, which the user approved.",
        "",
        "Plan summary:",
        "  Add a --json flag to `log` so scripts can read changesets.",
        "",
        "Steps to carry out, in this order:",
        "1. [s1] Serialize changesets",
        "   Add toJson(changeset) returning id, time, goal, status.",
        "   Keep field names stable.",
        "   Files: core/changeset.ts",
        "2. [s2] Wire the flag",
        "   Parse --json in the log command and print one JSON array.",
        "   Files: modes/cli/commands/log.ts, modes/cli/args.ts",
        "",
        "Left out by the user; do NOT do these (only what the chosen steps need from them):",
        "- [s3] Document it",
        "",
        "Risks to keep in mind:",
        "- Scripts may depend on the text output.",
        "",
        "Open questions (choose the most conservative answer and say in your final message what you assumed):",
        "- Should the JSON include file lists?",
      ].join("\n"),
    );
    expect(goal).not.toContain("Mention --json in the README");
  });

  test("all steps chosen: nothing is listed as left out", () => {
    const goal = planToGoal(plan, ["s1", "s2", "s3"]);
    expect(goal.startsWith("Carry out the following plan, which the user approved.")).toBe(true);
    expect(goal).toContain("3. [s3] Document it");
    expect(goal).not.toContain("Left out");
  });

  test("no step or an unknown id is an error that lists the valid ids", () => {
    expect(() => planToGoal(plan, [])).toThrow(/No step was chosen/);
    expect(() => planToGoal(plan, ["s1", "s9"])).toThrow("Unknown step id(s): s9. The plan's steps are: s1, s2, s3.");
  });
});
