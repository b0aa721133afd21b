import type { IntentOpinion } from "../core/staging/changeset.ts";

/**
 * The intent check as one line, the same words in the terminal, on the card and on the
 * page, always said to be the model's opinion: `Model's view of intent: more than asked —
 * also renames X`, or `intent not checked: the model timed out after 8 s`.
 */
export function intentLine(opinion: IntentOpinion): string {
  const by = opinion.model ? ` (${opinion.model})` : "";
  if (opinion.verdict === "unchecked") return `intent not checked: ${opinion.detail}${by}`;
  const words =
    opinion.verdict === "matches" ? "matches" : opinion.verdict === "more" ? "more than asked" : "less than asked";
  return `Model's view of intent: ${words}${opinion.detail ? ` — ${opinion.detail}` : ""}${by}`;
}

/** True when the opinion is one a reviewer should look into (more or less than asked). */
export function intentWarns(opinion: IntentOpinion): boolean {
  return opinion.verdict === "more" || opinion.verdict === "less";
}
