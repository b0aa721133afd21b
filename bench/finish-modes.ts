// The ways small and medium models (qwen2.5-coder and Llama through Ollama,
// gpt-oss on Groq, DeepSeek through OpenRouter) end a run with nothing done or
// code that would not compile staged, each replayed through the real loop over
// the provider's HTTP protocol: the Groq client talks to a local fake server
// that plays the model's replies (finish reasons, text-form calls, <think>
// blocks, a context-length refusal), then session → policy seam → tools →
// overlay. Shared by bench/recovery-bench.ts (this tree against a baseline
// checkout) and test/agent/finish-loop.test.ts; the project is imported from a
// given root, the fake server always from this tree.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  errorReply,
  type FakeReply,
  type FakeToolCall,
  startFakeOpenAIServer,
  textReply,
} from "../test/support/fake-openai-server.ts";
import { FIXTURE, importApprover, stagedView } from "./recovery-modes.ts";

/** One failure mode: files, the model's replies over HTTP, and what a good harness ends with. */
export interface FinishMode {
  id: string;
  /** The item of the work this mode belongs to: 1 end of a turn, 2 content, 3 argument shapes, 4 gpt-oss habits, 5 context budget, 6 loops. */
  item: 1 | 2 | 3 | 4 | 5 | 6;
  what: string;
  files?: Record<string, string>;
  replies: FakeReply[];
  /** Environment added to the run's (PENCIL_CONTEXT_WINDOW for a small model). */
  env?: Record<string, string>;
  maxSteps?: number;
  /** "file": right when the files are as in `expect`. "answer": right when the last answer (and the run's note) holds `needles`, nothing wrong staged. */
  goal: "file" | "answer";
  /** Final content per path (null: must not exist). Staged files not listed are wrong. */
  expect?: Record<string, string | null>;
  needles: string[];
}

/** How a mode ended: the right file; an answer with what the model needs; a generic or no answer; wrong content staged. */
export type FinishVerdict = "correct" | "recoverable" | "generic" | "wrong";

export interface FinishResult {
  id: string;
  verdict: FinishVerdict;
  /** The last thing the model read (tool results or a nudge), then the run's note for the owner. */
  answer: string;
  answers: string[];
  files: Record<string, string | null>;
  stopped: string;
}

const TAX = FIXTURE["src/tax.ts"]!;
const TAX_02 = TAX.replace("0.10", "0.2");
const COMPARE = "export function inRange(a: number, b: number, c: number): boolean {\n  return a < b && b < c;\n}\n";
const EXTRA: Record<string, string> = {
  Makefile: "build:\n\tgo build ./...\n\ntest:\n\tgo test ./...\n",
  "main.go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n',
  "src/compare.ts": COMPARE,
};

const call = (name: string, args: string | Record<string, unknown>, extra: Partial<FakeReply> = {}): FakeReply =>
  ({ kind: "reply", toolCalls: [{ name, arguments: args } as FakeToolCall], ...extra }) as FakeReply;
const read = (path: string) => call("read_file", { path });
const edit = (path: string, old_string: string, new_string: string, extra: Record<string, unknown> = {}) =>
  call("edit_file", { path, old_string, new_string, ...extra });
const write = (path: string, content: string) => call("write_file", { path, content });
const text = (t: string, extra: Partial<FakeReply> = {}): FakeReply => ({ ...textReply(t), ...extra }) as FakeReply;
const editRate = edit("src/tax.ts", "0.10", "0.2");
const rateArgs = { path: "src/tax.ts", old_string: "0.10", new_string: "0.2" };
const DIFF =
  "--- a/src/tax.ts\n+++ b/src/tax.ts\n@@ -1,3 +1,3 @@\n-export const TAX_RATE = 0.10;\n+export const TAX_RATE = 0.2;\n \n export function priceWithTax(price: number): number {\n";
const patch = (body: string) => `*** Begin Patch\n${body}\n*** End Patch`;
/** A mode whose right end is the rate in src/tax.ts changed to 0.2, and nothing else staged. */
const toRate = (mode: Omit<FinishMode, "goal" | "expect" | "needles">): FinishMode => ({
  ...mode,
  goal: "file",
  expect: { "src/tax.ts": TAX_02 },
  needles: [],
});

export const FINISH_MODES: FinishMode[] = [
  // 1. The end of a turn.
  toRate({
    id: "end-empty-reply",
    item: 1,
    what: "an empty reply before any work",
    replies: [text(""), read("src/tax.ts"), editRate],
  }),
  toRate({
    id: "end-reasoning-only",
    item: 1,
    what: "a turn of reasoning alone, no answer, no call",
    replies: [
      { kind: "reply", reasoning: "I need to change the rate in src/tax.ts.", text: "" },
      read("src/tax.ts"),
      editRate,
    ],
  }),
  toRate({
    id: "end-think-only",
    item: 1,
    what: "a reply that is only a <think> block",
    replies: [text("<think>I should read src/tax.ts, then change 0.10 to 0.2.</think>"), read("src/tax.ts"), editRate],
  }),
  toRate({
    id: "end-length-prose",
    item: 1,
    what: "prose cut by the output-token limit (finish_reason length)",
    replies: [
      text("I will now rewrite the whole tax module so that the rate", { finishReason: "length" }),
      read("src/tax.ts"),
      editRate,
    ],
  }),
  {
    id: "end-length-mid-call",
    item: 1,
    what: "a call cut mid-arguments by the output-token limit",
    replies: [
      read("src/tax.ts"),
      call("edit_file", '{"path": "src/tax.ts", "old_string": "0.10", "new_string": "0.2', { finishReason: "length" }),
    ],
    goal: "answer",
    expect: { "src/tax.ts": TAX },
    needles: ["cut off", "smaller"],
  },
  toRate({
    id: "end-claim-nothing-staged",
    item: 1,
    what: '"I updated src/tax.ts" with nothing staged',
    replies: [text("I updated src/tax.ts: the rate is now 0.2."), read("src/tax.ts"), editRate],
  }),
  toRate({
    id: "end-claim-after-failed-edit",
    item: 1,
    what: '"Done" right after the last edit failed',
    replies: [
      read("src/tax.ts"),
      edit("src/tax.ts", "RATE=0.1", "RATE=0.2"),
      text("Done. I changed the tax rate to 0.2."),
      editRate,
    ],
  }),
  toRate({
    id: "end-text-call-json",
    item: 1,
    what: 'a call written as bare JSON {"name","arguments"}',
    replies: [read("src/tax.ts"), text(JSON.stringify({ name: "edit_file", arguments: rateArgs }))],
  }),
  toRate({
    id: "end-text-call-hermes",
    item: 1,
    what: "a call in Hermes/Qwen <tool_call> tags",
    replies: [
      read("src/tax.ts"),
      text(`<tool_call>\n${JSON.stringify({ name: "edit_file", arguments: rateArgs })}\n</tool_call>`),
    ],
  }),
  toRate({
    id: "end-text-call-function-tag",
    item: 1,
    what: "a call in Llama's <function=edit_file>{…}</function>",
    replies: [read("src/tax.ts"), text(`<function=edit_file>${JSON.stringify(rateArgs)}</function>`)],
  }),
  toRate({
    id: "end-text-call-qwen-xml",
    item: 1,
    what: "a call in Qwen3-coder's <function=…><parameter=…> tags",
    replies: [
      read("src/tax.ts"),
      text(
        "<function=edit_file>\n<parameter=path>\nsrc/tax.ts\n</parameter>\n<parameter=old_string>\n0.10\n</parameter>\n<parameter=new_string>\n0.2\n</parameter>\n</function>",
      ),
    ],
  }),
  toRate({
    id: "end-text-call-fenced",
    item: 1,
    what: "a call in a fenced JSON block after some prose",
    replies: [
      read("src/tax.ts"),
      text(
        `I'll make the change:\n\`\`\`json\n${JSON.stringify({ name: "edit_file", arguments: rateArgs }, null, 2)}\n\`\`\``,
      ),
    ],
  }),
  toRate({
    id: "end-text-call-read",
    item: 1,
    what: "a read written as text, then a native edit (the read counts)",
    replies: [text(JSON.stringify({ name: "read_file", arguments: { path: "src/tax.ts" } })), editRate],
  }),
  {
    id: "end-text-call-unknown-tool",
    item: 1,
    what: "a text call naming no tool (patch_file)",
    replies: [
      read("src/tax.ts"),
      text(`<tool_call>{"name": "patch_file", "arguments": {"path": "src/tax.ts"}}</tool_call>`),
    ],
    goal: "answer",
    needles: ["arrived as text", "edit_file"],
  },
  {
    id: "end-text-call-bad-args",
    item: 1,
    what: "a text call without new_string",
    replies: [
      read("src/tax.ts"),
      text(`<tool_call>{"name": "edit_file", "arguments": {"path": "src/tax.ts", "old_string": "0.10"}}</tool_call>`),
    ],
    goal: "answer",
    needles: ["arrived as text", "new_string is missing"],
  },
  {
    id: "end-text-call-denied",
    item: 1,
    what: "a text call writing .env: the same policy refuses it",
    replies: [
      text(`<tool_call>{"name": "write_file", "arguments": {"path": ".env", "content": "KEY=1\\n"}}</tool_call>`),
    ],
    goal: "answer",
    expect: { ".env": null },
    needles: ["permission denied", ".env"],
  },
  // 2. Content checks before staging.
  {
    id: "content-placeholder-new-string",
    item: 2,
    what: "`// ... existing code ...` in new_string standing for a line it drops",
    replies: [
      read("src/tax.ts"),
      edit(
        "src/tax.ts",
        "export function priceWithTax(price: number): number {\n  const tax = price * TAX_RATE;\n  return price + tax;\n}",
        "export function priceWithTax(price: number): number {\n  // ... existing code ...\n  return price + tax + 1;\n}",
      ),
    ],
    goal: "answer",
    expect: { "src/tax.ts": TAX },
    needles: ["     4\t  const tax = price * TAX_RATE;"],
  },
  toRate({
    id: "content-diff-as-new-string",
    item: 2,
    what: "a unified diff sent as new_string",
    replies: [read("src/tax.ts"), edit("src/tax.ts", "0.10", DIFF)],
  }),
  toRate({
    id: "content-diff-as-write",
    item: 2,
    what: "a unified diff sent as write_file content",
    replies: [read("src/tax.ts"), write("src/tax.ts", DIFF)],
  }),
  toRate({
    id: "content-apply-patch-as-write",
    item: 2,
    what: "an apply_patch body sent as write_file content",
    replies: [
      read("src/tax.ts"),
      write(
        "src/tax.ts",
        patch("*** Update File: src/tax.ts\n@@\n-export const TAX_RATE = 0.10;\n+export const TAX_RATE = 0.2;"),
      ),
    ],
  }),
  {
    id: "content-diff-failing-hunk",
    item: 2,
    what: "a diff as content whose hunk does not apply",
    replies: [
      read("src/tax.ts"),
      write("src/tax.ts", DIFF.replace("-export const TAX_RATE = 0.10;", "-export const TAX_RATE = 0.15;")),
    ],
    goal: "answer",
    expect: { "src/tax.ts": TAX },
    needles: ["hunk 1", "does not apply", "TAX_RATE = 0.15"],
  },
  {
    id: "content-conflict-markers",
    item: 2,
    what: "conflict markers in new_string",
    replies: [
      read("src/tax.ts"),
      edit(
        "src/tax.ts",
        "export const TAX_RATE = 0.10;",
        "<<<<<<< HEAD\nexport const TAX_RATE = 0.10;\n=======\nexport const TAX_RATE = 0.2;\n>>>>>>> feature",
      ),
    ],
    goal: "answer",
    expect: { "src/tax.ts": TAX },
    needles: ["conflict markers", "<<<<<<< HEAD"],
  },
  toRate({
    id: "content-fenced-write",
    item: 2,
    what: "a whole .ts file wrapped in a ```ts fence",
    replies: [read("src/tax.ts"), write("src/tax.ts", `\`\`\`ts\n${TAX_02}\`\`\`\n`)],
  }),
  {
    id: "content-fenced-create",
    item: 2,
    what: "a new .ts file wrapped in a ```typescript fence",
    replies: [call("create_file", { path: "src/rate.ts", content: "```typescript\nexport const RATE = 2;\n```" })],
    goal: "file",
    expect: { "src/rate.ts": "export const RATE = 2;\n" },
    needles: [],
  },
  {
    id: "content-fence-kept-markdown",
    item: 2,
    what: "a fence in a Markdown file is kept",
    replies: [call("create_file", { path: "docs/usage.md", content: "```sh\nnpm test\n```\n" })],
    goal: "file",
    expect: { "docs/usage.md": "```sh\nnpm test\n```\n" },
    needles: [],
  },
  {
    id: "content-html-entities",
    item: 2,
    what: "`&lt;` and `&amp;&amp;` in new TypeScript",
    replies: [
      read("src/compare.ts"),
      edit("src/compare.ts", "return a < b && b < c;", "return a &lt;= b &amp;&amp; b &lt;= c;"),
    ],
    goal: "file",
    expect: { "src/compare.ts": COMPARE.replace("a < b && b < c", "a <= b && b <= c") },
    needles: [],
  },
  {
    id: "content-entities-kept-html",
    item: 2,
    what: "entities in an HTML file are kept",
    replies: [call("create_file", { path: "public/index.html", content: "<p>a &lt; b</p>\n" })],
    goal: "file",
    expect: { "public/index.html": "<p>a &lt; b</p>\n" },
    needles: [],
  },
  {
    id: "content-makefile-spaces",
    item: 2,
    what: "Makefile recipes written with spaces",
    replies: [
      read("Makefile"),
      write("Makefile", "build:\n    go build ./...\n\ntest:\n    go test ./...\n\nlint:\n    go vet ./...\n"),
    ],
    goal: "file",
    expect: { Makefile: "build:\n\tgo build ./...\n\ntest:\n\tgo test ./...\n\nlint:\n\tgo vet ./...\n" },
    needles: [],
  },
  {
    id: "content-go-spaces",
    item: 2,
    what: "a Go file written with spaces (gofmt uses tabs)",
    replies: [
      read("main.go"),
      write("main.go", 'package main\n\nimport "fmt"\n\nfunc main() {\n    fmt.Println("hello")\n}\n'),
    ],
    goal: "file",
    expect: { "main.go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello")\n}\n' },
    needles: [],
  },
  toRate({
    id: "content-final-newline",
    item: 2,
    what: "a whole-file write without the file's final newline",
    replies: [read("src/tax.ts"), write("src/tax.ts", TAX_02.trimEnd())],
  }),
  {
    id: "content-crlf-kept",
    item: 2,
    what: "a whole-file write of a CRLF file in LF",
    replies: [read("notes/windows.txt"), write("notes/windows.txt", "first line\nsecond line\nthird line, changed\n")],
    goal: "file",
    expect: { "notes/windows.txt": "first line\r\nsecond line\r\nthird line, changed\r\n" },
    needles: [],
  },
  {
    id: "content-tolerant-inner-lines",
    item: 2,
    what: "a tolerant match whose new_string adds deeper inner lines",
    replies: [
      read("src/cart.py"),
      edit(
        "src/cart.py",
        "def total(self, prices):\n    total = 0\n    for item, qty in self.items:\n        total += prices[item] * qty\n    return total",
        "def total(self, prices):\n    total = 0\n    for item, qty in self.items:\n        if item in prices:\n            total += prices[item] * qty\n    return total",
      ),
    ],
    goal: "file",
    expect: {
      "src/cart.py": FIXTURE["src/cart.py"]!.replace(
        "            total += prices[item] * qty\n",
        "            if item in prices:\n                total += prices[item] * qty\n",
      ),
    },
    needles: [],
  },
  // 3. Arguments in the wrong shape.
  toRate({
    id: "shape-envelope",
    item: 3,
    what: 'arguments wrapped in {"name":"edit_file","arguments":{…}}',
    replies: [read("src/tax.ts"), call("edit_file", { name: "edit_file", arguments: rateArgs })],
  }),
  toRate({
    id: "shape-envelope-string",
    item: 3,
    what: "an envelope whose arguments are stringified JSON",
    replies: [read("src/tax.ts"), call("edit_file", { name: "edit_file", arguments: JSON.stringify(rateArgs) })],
  }),
  toRate({
    id: "shape-null-optional",
    item: 3,
    what: "`replace_all: null`",
    replies: [read("src/tax.ts"), edit("src/tax.ts", "0.10", "0.2", { replace_all: null })],
  }),
  {
    id: "shape-path-list-read",
    item: 3,
    what: "read_file with a list of paths",
    replies: [call("read_file", { path: ["src/tax.ts", "src/utils.ts"] })],
    goal: "answer",
    needles: ["TAX_RATE = 0.10", "formatPrice", "once per file"],
  },
  {
    id: "shape-path-list-edit",
    item: 3,
    what: "edit_file with a list of paths",
    replies: [read("src/tax.ts"), edit(["src/tax.ts", "src/utils.ts"] as unknown as string, "0.10", "0.2")],
    goal: "answer",
    expect: { "src/tax.ts": TAX },
    needles: ["`path` was given as a list", "once per file"],
  },
  {
    id: "shape-edits-list",
    item: 3,
    what: "`edits: [{old_string,new_string}, …]` in one call",
    replies: [
      read("src/tax.ts"),
      call("edit_file", {
        path: "src/tax.ts",
        edits: [
          { old_string: "0.10", new_string: "0.2" },
          { old_string: "0.9; // 10 % off", new_string: "0.8; // 20 % off" },
        ],
      }),
    ],
    goal: "file",
    expect: { "src/tax.ts": TAX_02.replace("0.9; // 10 % off", "0.8; // 20 % off") },
    needles: [],
  },
  {
    id: "shape-edits-one-fails",
    item: 3,
    what: "an edits list whose second edit does not match: refused whole",
    replies: [
      read("src/tax.ts"),
      call("edit_file", {
        path: "src/tax.ts",
        edits: [
          { old_string: "0.10", new_string: "0.2" },
          { old_string: "price * 0.95", new_string: "price * 0.8" },
        ],
      }),
    ],
    goal: "answer",
    expect: { "src/tax.ts": TAX },
    needles: ["edit 2 of 2", "Nothing was staged"],
  },
  toRate({
    id: "shape-edits-stringified",
    item: 3,
    what: "an edits list sent as a JSON string",
    replies: [
      read("src/tax.ts"),
      call("edit_file", { path: "src/tax.ts", edits: JSON.stringify([{ old_string: "0.10", new_string: "0.2" }]) }),
    ],
  }),
  {
    id: "shape-wrong-type",
    item: 3,
    what: "`path` given as a number",
    replies: [call("read_file", { path: 42 })],
    goal: "answer",
    needles: ["path must be a string"],
  },
  // 4. The default model's habits (gpt-oss).
  {
    id: "habit-apply-patch-update",
    item: 4,
    what: "apply_patch: update with an @@ context line",
    replies: [
      read("src/tax.ts"),
      call("apply_patch", {
        input: patch(
          "*** Update File: src/tax.ts\n@@ export function discount(price: number): number {\n-  return price * 0.9; // 10 % off\n+  return price * 0.8; // 20 % off",
        ),
      }),
    ],
    goal: "file",
    expect: { "src/tax.ts": TAX.replace("0.9; // 10 % off", "0.8; // 20 % off") },
    needles: [],
  },
  {
    id: "habit-apply-patch-add",
    item: 4,
    what: "apply_patch: add a file",
    replies: [call("apply_patch", { input: patch("*** Add File: src/rate.ts\n+export const RATE = 2;") })],
    goal: "file",
    expect: { "src/rate.ts": "export const RATE = 2;\n" },
    needles: [],
  },
  {
    id: "habit-apply-patch-delete",
    item: 4,
    what: "apply_patch: delete a file",
    replies: [call("apply_patch", { input: patch("*** Delete File: README.md") })],
    goal: "file",
    expect: { "README.md": null },
    needles: [],
  },
  {
    id: "habit-apply-patch-move",
    item: 4,
    what: "apply_patch: move and update",
    replies: [
      read("src/dup.ts"),
      call("apply_patch", {
        input: patch(
          "*** Update File: src/dup.ts\n*** Move to: src/nulls.ts\n@@ function b() {\n-  return null;\n+  return undefined;",
        ),
      }),
    ],
    goal: "file",
    expect: {
      "src/dup.ts": null,
      "src/nulls.ts": "function a() {\n  return null;\n}\nfunction b() {\n  return undefined;\n}\n",
    },
    needles: [],
  },
  {
    id: "habit-apply-patch-unread",
    item: 4,
    what: "apply_patch updating a file not read yet",
    replies: [
      call("apply_patch", {
        input: patch("*** Update File: src/tax.ts\n@@\n-export const TAX_RATE = 0.10;\n+export const TAX_RATE = 0.2;"),
      }),
    ],
    goal: "answer",
    expect: { "src/tax.ts": TAX },
    needles: ["has not been read", "read_file"],
  },
  {
    id: "habit-apply-patch-bad-context",
    item: 4,
    what: "apply_patch whose removed line is not in the file",
    replies: [
      read("src/tax.ts"),
      call("apply_patch", {
        input: patch("*** Update File: src/tax.ts\n@@\n-export const TAX_RATE = 0.15;\n+export const TAX_RATE = 0.2;"),
      }),
    ],
    goal: "answer",
    expect: { "src/tax.ts": TAX },
    needles: ["does not apply", "TAX_RATE = 0.15", "line 1"],
  },
  {
    id: "habit-apply-patch-denied",
    item: 4,
    what: "apply_patch adding .env: the policy refuses it as for edit_file",
    replies: [call("apply_patch", { input: patch("*** Add File: .env\n+KEY=1") })],
    goal: "answer",
    expect: { ".env": null },
    needles: ["permission denied", ".env"],
  },
  toRate({
    id: "habit-harmony-name",
    item: 4,
    what: "tool name `edit_file<|channel|>commentary`",
    replies: [read("src/tax.ts"), call("edit_file<|channel|>commentary", rateArgs)],
  }),
  toRate({
    id: "habit-harmony-args",
    item: 4,
    what: "arguments starting `<|constrain|>json`",
    replies: [read("src/tax.ts"), call("edit_file", `<|constrain|>json${JSON.stringify(rateArgs)}`)],
  }),
  {
    id: "habit-editor-view",
    item: 4,
    what: "str_replace_editor view with view_range",
    replies: [call("str_replace_editor", { command: "view", path: "src/tax.ts", view_range: [8, 9] })],
    goal: "answer",
    needles: ["     8\texport function discount", "     9\t  return price * 0.9;"],
  },
  toRate({
    id: "habit-editor-str-replace",
    item: 4,
    what: "str_replace_based_edit_tool str_replace",
    replies: [
      read("src/tax.ts"),
      call("str_replace_based_edit_tool", {
        command: "str_replace",
        path: "src/tax.ts",
        old_str: "0.10",
        new_str: "0.2",
      }),
    ],
  }),
  {
    id: "habit-editor-create",
    item: 4,
    what: "str_replace_editor create",
    replies: [
      call("str_replace_editor", { command: "create", path: "src/rate.ts", file_text: "export const RATE = 2;\n" }),
    ],
    goal: "file",
    expect: { "src/rate.ts": "export const RATE = 2;\n" },
    needles: [],
  },
  {
    id: "habit-editor-insert",
    item: 4,
    what: "str_replace_editor insert after line 1",
    replies: [
      read("src/tax.ts"),
      call("str_replace_editor", {
        command: "insert",
        path: "src/tax.ts",
        insert_line: 1,
        new_str: "export const MIN_PRICE = 0;",
      }),
    ],
    goal: "file",
    expect: { "src/tax.ts": TAX.replace("0.10;\n", "0.10;\nexport const MIN_PRICE = 0;\n") },
    needles: [],
  },
  // 5. Answers that fit the context.
  {
    id: "budget-huge-read",
    item: 5,
    what: "a 2,000-line read for an 8k-token local model",
    files: { "data/big.txt": Array.from({ length: 3000 }, (_, i) => `row ${i + 1}: ${"x".repeat(60)}`).join("\n") },
    env: { PENCIL_CONTEXT_WINDOW: "8192" },
    replies: [read("data/big.txt")],
    goal: "answer",
    needles: ["showing", "read on at offset"],
  },
  {
    id: "budget-minified-search",
    item: 5,
    what: "a search matching 300,000 characters of minified lines",
    files: {
      "dist/app.min.js": Array.from({ length: 150 }, (_, i) => `var TAX${i}=${"a+".repeat(1000)}1;`).join("\n"),
    },
    env: { PENCIL_CONTEXT_WINDOW: "32768" },
    replies: [call("search", { pattern: "TAX" })],
    goal: "answer",
    needles: ["showing", "narrow the pattern"],
  },
  toRate({
    id: "budget-context-error",
    item: 5,
    what: "HTTP 400 maximum context length: compacted and retried",
    replies: [
      read("src/tax.ts"),
      errorReply(
        400,
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens.",
        "invalid_request_error",
      ),
      editRate,
    ],
  }),
  // 6. Loops.
  {
    id: "loop-identical-write",
    item: 6,
    what: "the identical write three times",
    replies: [
      read("src/tax.ts"),
      write("src/tax.ts", TAX_02),
      write("src/tax.ts", TAX_02),
      write("src/tax.ts", TAX_02),
    ],
    goal: "answer",
    expect: { "src/tax.ts": TAX_02 },
    needles: ["Already done", "unchanged since your last call"],
  },
  {
    id: "loop-same-read",
    item: 6,
    what: "the same read over and over: answered, then the run stops",
    replies: Array.from({ length: 8 }, () => read("src/tax.ts")),
    goal: "answer",
    needles: ["Already done", "The run was stopped"],
  },
  {
    id: "loop-step-limit",
    item: 6,
    what: "the step limit: the run says what it was doing, its staged work kept",
    maxSteps: 3,
    replies: [read("src/tax.ts"), editRate, read("src/utils.ts"), read("src/cart.py")],
    goal: "answer",
    expect: { "src/tax.ts": TAX_02 },
    needles: ["limit of 3 steps", "read_file (src/utils.ts)", "kept for review"],
  },
];

/** Plays every mode against the project at `root` over HTTP; each in a fresh workspace and home. */
export async function replayFinish(root: string, modes: FinishMode[] = FINISH_MODES): Promise<FinishResult[]> {
  const { AgentRun, ...runModule } = await import(join(root, "app/agent-run.ts"));
  // An older checkout (a baseline) exports chooseModels beside AgentRun; later it has a file of its own.
  const { chooseModels } = runModule.chooseModels ? runModule : await import(join(root, "app/model-choice.ts"));
  const { createRuntime } = await import(join(root, "app/runtime.ts"));
  const { nobodyApprover } = await importApprover(root);
  const server = await startFakeOpenAIServer();
  const out: FinishResult[] = [];
  try {
    for (const mode of modes) {
      server.clear();
      const workspace = mkdtempSync(join(tmpdir(), "pencil-finish-ws-"));
      const home = mkdtempSync(join(tmpdir(), "pencil-finish-home-"));
      try {
        const files = { ...FIXTURE, ...EXTRA, ...mode.files };
        for (const [path, content] of Object.entries(files)) {
          mkdirSync(dirname(join(workspace, path)), { recursive: true });
          writeFileSync(join(workspace, path), content);
        }
        const env = {
          HOME: home,
          PENCIL_HOME: join(home, ".pencil"),
          GROQ_API_KEY: "gsk_finish_bench",
          GROQ_BASE_URL: `${server.url}/openai/v1`,
          ...mode.env,
        };
        server.enqueue(...mode.replies, textReply("Stopping here."));
        const runtime = createRuntime({ env, workspace });
        const run = await AgentRun.start(
          runtime,
          "agent",
          "Fix the shop",
          { approver: nobodyApprover, emit: () => {} },
          { models: chooseModels(runtime, { emit: () => {} }), maxSteps: mode.maxSteps ?? 20 },
        );
        const answers = answersOf(server.requests.map((r) => r.body));
        const expected = mode.expect ?? {};
        const named = Object.keys(expected);
        const { view, wrong } = stagedView(runtime.ws.root, run.overlay.list(), files, expected);
        const note = run.outcome?.note ? `\n${run.outcome.note}` : "";
        const answer = (answers.at(-1) ?? "") + note;
        const verdict: FinishVerdict = wrong
          ? "wrong"
          : mode.goal === "file" && named.length > 0 && named.every((p) => view(p) === expected[p])
            ? "correct"
            : mode.goal === "answer" && mode.needles.length > 0 && mode.needles.every((n) => answer.includes(n))
              ? "recoverable"
              : "generic";
        out.push({
          id: mode.id,
          verdict,
          answer,
          answers,
          files: Object.fromEntries(named.map((p) => [p, view(p)])),
          stopped: run.outcome?.stopped ?? "none",
        });
      } finally {
        rmSync(workspace, { recursive: true, force: true });
        rmSync(home, { recursive: true, force: true });
      }
    }
  } finally {
    await server.stop();
  }
  return out;
}

/** What the model read before each request after the first: tool results and user messages after its last reply. */
function answersOf(bodies: { messages?: { role: string; content: unknown }[] }[]): string[] {
  const out: string[] = [];
  for (const body of bodies.slice(1)) {
    const messages = body?.messages ?? [];
    let last = messages.length - 1;
    while (last >= 0 && messages[last]!.role !== "assistant") last--;
    const after = messages.slice(last + 1).filter((m) => m.role === "tool" || m.role === "user");
    if (after.length === 0) continue;
    out.push(after.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n"));
  }
  return out;
}
