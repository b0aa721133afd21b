import { planSchema, type Plan } from "../core/plan-schema.ts";
import type { PencilTool } from "./tool.ts";

/** `submit_plan`: its input is the plan itself; a valid plan goes to `onPlan` (the plan flow then ends the session). */
export function createSubmitPlanTool(onPlan: (plan: Plan) => void): PencilTool<Plan> {
  return {
    name: "submit_plan",
    description:
      "Submit the finished plan. Call it exactly once, at the end, after reading the code the plan depends on. " +
      "The plan is shown to the user, who chooses which steps to run; the session ends after this call.",
    inputSchema: planSchema,
    claims: () => [],
    async execute(plan) {
      onPlan(plan);
      return "Plan received.";
    },
  };
}
