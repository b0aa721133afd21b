// Policy reasons and tool errors are written for the model: they tell it what to do
// next ("Ask the user to paste the values you need"). The person at the screen needs
// the fact, addressed to them, not the model's instructions.

/** The first sentence of `reason` (what happened and why), the rest (advice to the model) dropped, "the user" turned into "you". */
export function forPerson(reason: string): string {
  const text = reason.replace(/^Error:\s*/, "").trim();
  const end = /\.\s+(?=[A-Z"`(])/.exec(text);
  const first = end ? text.slice(0, end.index + 1) : text;
  return first
    .replace(/\bthe user runs\b/g, "you run")
    .replace(/\bthe user changes\b/g, "you change")
    .replace(/\bthe user's\b/g, "your")
    .replace(/\bthe user\b/g, "you");
}
