import { indent, type Plan } from "../core/plan-schema.ts";

/** The plan as Markdown for the terminal or Telegram: summary, numbered steps with id, detail and files, risks, open questions. */
export function formatPlanMarkdown(plan: Plan): string {
  const lines = ["## Plan", "", plan.summary, "", "### Steps", ""];
  plan.steps.forEach((step, i) => {
    lines.push(`${i + 1}. **${step.title}** (\`${step.id}\`)`, indent(step.detail, "   "));
    if (step.files.length > 0) lines.push(`   Files: ${step.files.map((f) => `\`${f}\``).join(", ")}`);
  });
  if (plan.risks.length > 0) {
    lines.push("", "### Risks", "");
    for (const risk of plan.risks) lines.push(`- ${risk}`);
  }
  if (plan.openQuestions.length > 0) {
    lines.push("", "### Open questions", "");
    for (const q of plan.openQuestions) lines.push(`- ${q}`);
  }
  return lines.join("\n");
}
