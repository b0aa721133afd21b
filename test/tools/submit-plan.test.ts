import { describe, expect, test } from "bun:test";
import { planSchema, type Plan } from "../../core/plan-schema.ts";
import { createSubmitPlanTool } from "../../tools/submit-plan.ts";
import { tempDir } from "../support/temp.ts";
import { toolContext } from "../support/tool-context.ts";
import { plan } from "../fixtures/sample-plan.ts";

describe("submit_plan", () => {
  test('hands the parsed plan (defaults applied) to onPlan and answers "Plan received."', async () => {
    const received: Plan[] = [];
    const tool = createSubmitPlanTool((p) => received.push(p));
    expect(tool.name).toBe("submit_plan");
    expect(tool.inputSchema).toBe(planSchema);
    expect(tool.claims(plan)).toEqual([]);
    const { run } = toolContext(tempDir());
    const out = await run(tool, {
      summary: "Fix it.",
      steps: [{ id: "s1", title: "Fix", detail: "Fix the bug in parse()." }],
    } as Plan);
    expect(out).toBe("Plan received.");
    expect(received).toEqual([
      {
        summary: "Fix it.",
        steps: [{ id: "s1", title: "Fix", detail: "Fix the bug in parse().", files: [] }],
        risks: [],
        openQuestions: [],
      },
    ]);
  });

  test("an invalid plan never reaches onPlan", () => {
    const tool = createSubmitPlanTool(() => {
      throw new Error("must not be called");
    });
    expect(tool.inputSchema.safeParse({ summary: "x", steps: [] }).success).toBe(false);
  });
});
