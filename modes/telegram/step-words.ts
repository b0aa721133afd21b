import { describeInput } from "./run-summary.ts";

/** What each tool call is doing, in words; `%s` is the call's path, pattern, command or URL. */
const WORDS: Record<string, string> = {
  read_file: "reading %s",
  list_files: "listing %s",
  search: "searching for “%s”",
  create_file: "staging a new file %s",
  write_file: "staging a rewrite of %s",
  edit_file: "staging an edit to %s",
  delete_file: "staging the deletion of %s",
  run_command: "running %s",
  fetch_url: "fetching %s",
  web_search: "searching the web for “%s”",
  submit_plan: "submitting the plan",
};

/** A tool call as a person reads it (`reading src/x.ts`, `staging an edit to a.ts`); unknown tools keep their name. */
export function stepInWords(tool: string, input: unknown): string {
  const subject = describeInput(input);
  const words = Object.hasOwn(WORDS, tool) ? WORDS[tool]! : `${tool} %s`;
  if (!subject) return words.replace(/ ?“?%s”?/, "").replace(/ (of|to|for)$/, "") || tool;
  return words.replace("%s", subject);
}
