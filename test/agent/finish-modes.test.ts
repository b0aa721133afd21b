import { describe, expect, test } from "bun:test";
import { RepeatedCalls } from "../../agent/nudges.ts";
import { findTextToolCalls } from "../../agent/text-tool-calls.ts";
import { claimsSuccess, isContextLengthError } from "../../agent/turn-end.ts";
import { normalizeInput, resolveToolName, stripHarmony } from "../../agent/tool-call-repair.ts";
import { createEditFileTool } from "../../tools/edit-file.ts";
import { createReadFileTool } from "../../tools/read-file.ts";

// The loop's side of the modes of bench/finish-modes.ts (the loop-level replay is
// test/agent/finish-loop.test.ts; the tools' answers are test/tools/apply-patch.test.ts and
// test/tools/edit/content-checks.test.ts): arguments repaired, text-form calls found, a turn's
// end read, repeated calls caught.
const edit = createEditFileTool();
const readTool = createReadFileTool();

describe("arguments in the wrong shape", () => {
  test.each([
    [{ path: ["a", "b"], old_string: "x", new_string: "y" }, "`path` was given as a list"],
    [{ path: null, old_string: "x", new_string: "y" }, "`path` was null"],
    [{ path: 3, old_string: "x", new_string: "y" }, "path must be a string, not a number"],
    [{ path: "a", old_string: "x" }, "new_string is missing"],
  ])("%j is answered with the actual mistake", (input, needle) => {
    const r = normalizeInput(edit, input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain(needle);
  });

  test("an envelope is unwrapped only when none of the tool's own fields is beside it", () => {
    const inner = { path: "a", old_string: "x", new_string: "y" };
    expect(normalizeInput(edit, { name: "edit_file", arguments: inner })).toEqual({ ok: true, value: inner });
    expect(normalizeInput(edit, { path: "b", arguments: inner }).ok).toBe(false);
  });

  test("a list of paths to read_file becomes one input per path", () => {
    const r = normalizeInput(readTool, { path: ["a", "b"], limit: 5 });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.each).toEqual([
        { path: "a", limit: 5 },
        { path: "b", limit: 5 },
      ]);
  });
});

describe("text-form calls, Harmony residue, the end of a turn", () => {
  test.each([
    ['{"name": "read_file", "arguments": {"path": "a"}}', "read_file", { path: "a" }],
    [
      '<tool_call>\n{"name": "read_file", "arguments": "{\\"path\\": \\"a\\"}"}\n</tool_call>',
      "read_file",
      { path: "a" },
    ],
    ['<function=read_file>{"path": "a"}</function>', "read_file", { path: "a" }],
    ["<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>", "read_file", { path: "a" }],
    ['Sure:\n```json\n{"tool": "read_file", "parameters": {"path": "a"}}\n```', "read_file", { path: "a" }],
    [
      '{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\":\\"a\\"}"}}',
      "read_file",
      { path: "a" },
    ],
  ])("%s is read as %s", (text, name, input) => {
    const found = findTextToolCalls(text)!;
    expect(found.calls[0]!.name).toBe(name);
    expect(found.calls[0]!.input).toEqual(input);
  });

  test("prose and code are not calls", () => {
    expect(findTextToolCalls("The rate is 0.10.")).toBeNull();
    expect(findTextToolCalls("```ts\nconst a = { name: 1 };\n```")).toBeNull();
    expect(findTextToolCalls('{"name": "Alice"}')!.calls[0]!.explicit).toBe(false);
  });

  test.each([
    ["edit_file<|channel|>commentary", "edit_file"],
    ["functions.read_file<|constrain|>json", "read_file"],
    ["assistant<|channel|>commentary to=functions.search", "search"],
  ])("Harmony residue %s → %s", (name, real) => {
    expect(resolveToolName(name, ["read_file", "edit_file", "search"])).toBe(real);
  });

  test("Harmony tokens are stripped from arguments text", () => {
    expect(stripHarmony('<|constrain|>json{"path": "a"}<|call|>')).toBe('{"path": "a"}');
  });

  test.each([
    ["I updated src/tax.ts.", true],
    ["Done.", true],
    ["The file has been fixed.", true],
    ["I could not find the rate; which file holds it?", false],
    ["Nothing needs to change: the rate is already 0.2.", false],
  ])("%s claims success: %p", (text, claims) => expect(claimsSuccess(text)).toBe(claims));

  test.each([
    ["HTTP 400: This model's maximum context length is 8192 tokens", true],
    ["Please reduce the length of the messages", true],
    ["prompt is too long: 210000 tokens > 200000 maximum", true],
    ["HTTP 400: invalid tool schema", false],
    ["HTTP 429: rate limit reached", false],
  ])("%s is a context-length refusal: %p", (message, is) => expect(isContextLengthError(message)).toBe(is));
});

describe("loops", () => {
  test("the third identical read is 'already done' without its output while the earlier one is recent; the fifth stops the run", () => {
    const r = new RepeatedCalls();
    const input = { path: "a.ts" };
    expect(r.answer("read_file", input, true, "1\tx")).toBe("1\tx");
    expect(r.answer("read_file", input, true, "1\tx")).toBe("1\tx");
    const third = r.answer("read_file", input, true, "1\tx");
    expect(third).toContain("Already done; unchanged since your last call");
    expect(third).not.toContain("1\tx");
    expect(r.stopReason).toBeNull();
    r.answer("read_file", input, true, "1\tx");
    r.answer("read_file", input, true, "1\tx");
    expect(r.stopReason).toContain("repeated the same read_file call 5 times");
  });

  test("a read whose result changed is not a repeat; an older repeat gets its output again", () => {
    const r = new RepeatedCalls();
    r.answer("read_file", { path: "a" }, true, "one");
    r.answer("read_file", { path: "a" }, true, "two");
    expect(r.answer("read_file", { path: "a" }, true, "two")).toBe("two");
    for (let i = 0; i < 6; i++) r.answer("search", { pattern: String(i) }, true, "x");
    const late = r.answer("read_file", { path: "a" }, true, "two");
    expect(late).toContain("Already done");
    expect(late).toContain("\ntwo");
  });
});
