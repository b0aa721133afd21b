import { z } from "zod";

/** One step of a plan: a stable id the user picks it by, what to do, and the files it touches. */
const planStepSchema = z.object({
  id: z
    .string()
    .trim()
    .min(1)
    .max(40)
    .describe(
      'Short stable id of the step, such as "s1", "s2"; the user chooses steps by these ids. Unique within the plan.',
    ),
  title: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .describe('The step in a few words, as an action: "Add a --json flag to the log command".'),
  detail: z
    .string()
    .trim()
    .min(1)
    .describe(
      "What to do and how, precise enough that a coding agent can carry it out later without this conversation: " +
        "which functions or behaviour change, edge cases, and how to test it. Prose, not code.",
    ),
  files: z
    .array(z.string().trim().min(1))
    .default([])
    .describe("Workspace-relative paths this step will create, edit or delete (empty when none)."),
});

/** The structured plan `submit_plan` takes: summary, ordered steps (at least one), risks and open questions. */
export const planSchema = z
  .object({
    summary: z
      .string()
      .trim()
      .min(1)
      .describe("The goal and the approach in two to five sentences, for the user deciding whether to go ahead."),
    steps: z
      .array(planStepSchema)
      .min(1)
      .describe("The steps in the order they should be carried out; each should be a reviewable change on its own."),
    risks: z
      .array(z.string().trim().min(1))
      .default([])
      .describe("What could go wrong or break (behaviour changes, migrations, missing tests); empty when none."),
    openQuestions: z
      .array(z.string().trim().min(1))
      .default([])
      .describe("Decisions the user should make before or while the plan runs; empty when none."),
  })
  .superRefine((plan, ctx) => {
    const seen = new Set<string>();
    plan.steps.forEach((step, i) => {
      if (seen.has(step.id)) {
        ctx.addIssue({
          code: "custom",
          path: ["steps", i, "id"],
          message: `Step id "${step.id}" is used twice; give every step its own id.`,
        });
      }
      seen.add(step.id);
    });
  });

/** A plan as submitted by the model (after validation and defaults). */
export type Plan = z.infer<typeof planSchema>;

/**
 * The goal of an agent run that carries out the chosen steps of `plan` (in the
 * plan's order): the summary, each chosen step's detail and files, the steps
 * the user left out (not to be done), and the risks and open questions.
 * Throws when no step is chosen or an id is not in the plan.
 */
export function planToGoal(plan: Plan, chosenStepIds: readonly string[]): string {
  const known = new Set(plan.steps.map((s) => s.id));
  const unknown = chosenStepIds.filter((id) => !known.has(id));
  if (unknown.length > 0)
    throw new Error(`Unknown step id(s): ${unknown.join(", ")}. The plan's steps are: ${[...known].join(", ")}.`);
  const chosen = new Set(chosenStepIds);
  if (chosen.size === 0) throw new Error("No step was chosen; choose at least one step of the plan to run.");
  const kept = plan.steps.filter((s) => chosen.has(s.id));
  const left = plan.steps.filter((s) => !chosen.has(s.id));

  const lines = [
    kept.length === plan.steps.length
      ? "Carry out the following plan, which the user approved."
      : `Carry out the chosen steps (${kept.length} of ${plan.steps.length}) of the following plan, which the user approved.`,
    "",
    "Plan summary:",
    indent(plan.summary, "  "),
    "",
    "Steps to carry out, in this order:",
  ];
  kept.forEach((step, i) => {
    lines.push(`${i + 1}. [${step.id}] ${step.title}`, indent(step.detail, "   "));
    lines.push(`   Files: ${step.files.length > 0 ? step.files.join(", ") : "(none named)"}`);
  });
  if (left.length > 0) {
    lines.push("", "Left out by the user; do NOT do these (only what the chosen steps need from them):");
    for (const step of left) lines.push(`- [${step.id}] ${step.title}`);
  }
  if (plan.risks.length > 0) {
    lines.push("", "Risks to keep in mind:");
    for (const risk of plan.risks) lines.push(`- ${risk}`);
  }
  if (plan.openQuestions.length > 0) {
    lines.push(
      "",
      "Open questions (choose the most conservative answer and say in your final message what you assumed):",
    );
    for (const q of plan.openQuestions) lines.push(`- ${q}`);
  }
  return lines.join("\n");
}

/** Each non-empty line of `text` prefixed with `pad` (empty lines stay empty). */
export function indent(text: string, pad: string): string {
  return text
    .split("\n")
    .map((line) => (line.trim() ? pad + line : ""))
    .join("\n");
}
