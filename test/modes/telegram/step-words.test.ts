import { describe, expect, test } from "bun:test";
import { stepInWords } from "../../../modes/telegram/step-words.ts";

describe("progress in words", () => {
  test.each([
    ["read_file", { path: "src/x.ts" }, "reading src/x.ts"],
    ["search", { pattern: "TODO" }, "searching for “TODO”"],
    ["edit_file", { path: "a.ts", old_string: "x", new_string: "y" }, "staging an edit to a.ts"],
    ["create_file", { path: "n.ts", content: "" }, "staging a new file n.ts"],
    ["delete_file", { path: "old.ts" }, "staging the deletion of old.ts"],
    ["run_command", { command: "npm test" }, "running npm test"],
    ["list_files", {}, "listing"],
    ["submit_plan", { steps: [] }, "submitting the plan"],
    ["mystery", { path: "p" }, "mystery p"],
    ["constructor", {}, "constructor"],
  ])("%s %j → %s", (tool, input, words) => expect(stepInWords(tool, input)).toBe(words));
});
