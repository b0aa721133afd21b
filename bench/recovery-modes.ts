// The ways a weak model fails, each replayed through the real loop (scripted
// model → session → policy seam → tools → overlay) on a small fixture repository.
// Shared by bench/recovery-bench.ts (today's tree against a baseline checkout)
// and test/agent/recovery-loop.test.ts. The replay imports the project from a given
// root, so the very same script measures an older checkout.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A tool call as the weak model sends it: `input` JSON-encoded, or `rawInput` verbatim. */
export interface WeakCall {
  name: string;
  input?: unknown;
  rawInput?: string;
}

/** One failure mode: files, the weak model's turns, and what a good harness ends with. */
export interface RecoveryMode {
  id: string;
  /** Issue 8's item (1-8), or "lab" for the published measurement's cases. */
  item: number | "lab";
  /** In words, for the README table. */
  what: string;
  /** Files added to (or replacing) the fixture. */
  files?: Record<string, string>;
  /** The model's turns: a tool call each, or text (prose that ends the turn). */
  turns: (WeakCall | { text: string })[];
  /**
   * "file": the right outcome is the file content in `expect`.
   * "answer": the right outcome is an answer with `needles` and nothing wrong staged.
   */
  goal: "file" | "answer";
  /** Final content per path (null: must not exist). Files not listed must stay unchanged. */
  expect?: Record<string, string | null>;
  /** Text the answer to the last call must contain for the model to take the next step (nearby text, line numbers, paths). */
  needles: string[];
}

/** How one mode ended. */
export type Verdict = "correct" | "recoverable" | "generic" | "wrong";

/** The replay result of one mode. */
export interface ModeResult {
  id: string;
  verdict: Verdict;
  /** The answer to the last tool call, as the model read it. */
  answer: string;
  /** Every answer, in call order. */
  answers: string[];
  /** Final view (staged, else disk) of the paths the mode names, null when absent. */
  files: Record<string, string | null>;
}

export const FIXTURE: Record<string, string> = {
  "src/tax.ts": [
    "export const TAX_RATE = 0.10;",
    "",
    "export function priceWithTax(price: number): number {",
    "  const tax = price * TAX_RATE;",
    "  return price + tax;",
    "}",
    "",
    "export function discount(price: number): number {",
    "  return price * 0.9; // 10 % off",
    "}",
    "",
  ].join("\n"),
  "src/utils.ts": [
    "export function formatPrice(value: number): string {",
    '\treturn "$" + value.toFixed(2);',
    "}",
    "",
    "export function clamp(x: number, lo: number, hi: number): number {",
    "\tif (x < lo) return lo;",
    "\tif (x > hi) return hi;",
    "\treturn x;",
    "}",
    "",
  ].join("\n"),
  "src/cart.py": [
    "class Cart:",
    "    def __init__(self):",
    "        self.items = []",
    "",
    "    def add(self, item, qty=1):",
    "        self.items.append((item, qty))",
    "",
    "    def total(self, prices):",
    "        total = 0",
    "        for item, qty in self.items:",
    "            total += prices[item] * qty",
    "        return total",
    "",
  ].join("\n"),
  "src/messages.ts": [
    'export const GREETING = "Hello, \\"friend\\"";',
    "export const FAREWELL = 'Goodbye';",
    "export function banner(name: string): string {",
    '  return "Welcome, " + name + "!";',
    "}",
    "",
  ].join("\n"),
  "src/dup.ts": "function a() {\n  return null;\n}\nfunction b() {\n  return null;\n}\n",
  "notes/windows.txt": "first line\r\nsecond line\r\nthird line\r\n",
  "src/long.ts": Array.from({ length: 60 }, (_, i) => `export const v${i + 1} = ${i + 1};`).join("\n") + "\n",
  "README.md": "# Shop\n\nA tiny shop.\n",
};

const read = (path: string): WeakCall => ({ name: "read_file", input: { path } });
const edit = (path: string, old_string: string, new_string: string, extra: Record<string, unknown> = {}): WeakCall => ({
  name: "edit_file",
  input: { path, old_string, new_string, ...extra },
});
const replaceIn = (path: string, from: string, to: string) => ({ [path]: FIXTURE[path]!.replace(from, to) });

export const MODES: RecoveryMode[] = [
  // The lab's cases: the pattern is not literally in the code.
  {
    id: "lab-search-percent",
    item: "lab",
    what: "search `10%` where the code has `10 %`",
    turns: [{ name: "search", input: { pattern: "10%" } }],
    goal: "answer",
    needles: ["src/tax.ts:9", "10 % off"],
  },
  {
    id: "lab-search-assignment",
    item: "lab",
    what: "search `TAX_RATE=0.1` where the code has `TAX_RATE = 0.10`",
    turns: [{ name: "search", input: { pattern: "TAX_RATE=0.1" } }],
    goal: "answer",
    needles: ["src/tax.ts:1", "TAX_RATE = 0.10"],
  },
  {
    id: "lab-edit-assignment",
    item: "lab",
    what: "edit `TAX_RATE=0.1` (not in the file): closest line and the differing value",
    turns: [read("src/tax.ts"), edit("src/tax.ts", "TAX_RATE=0.1", "TAX_RATE=0.2")],
    goal: "answer",
    needles: ["line 1", "export const TAX_RATE = 0.10;", "0.10"],
  },
  // 1. search near-misses
  {
    id: "search-case",
    item: 1,
    what: "search in the wrong case",
    turns: [{ name: "search", input: { pattern: "tax_rate" } }],
    goal: "answer",
    needles: ["src/tax.ts:1"],
  },
  {
    id: "search-trailing-zero",
    item: 1,
    what: "search `0.90` where the code has `0.9`",
    turns: [{ name: "search", input: { pattern: "0.90" } }],
    goal: "answer",
    needles: ["src/tax.ts:9", "price * 0.9"],
  },
  {
    id: "search-identifiers",
    item: 1,
    what: "search a phrase that mixes identifiers (`tax = price*TAX_RATE`)",
    turns: [{ name: "search", input: { pattern: "tax = price*TAX_RATE" } }],
    goal: "answer",
    needles: ["src/tax.ts:4", "price * TAX_RATE"],
  },
  {
    id: "search-double-space",
    item: 1,
    what: "search `x <lo` (spacing differs around `<`)",
    turns: [{ name: "search", input: { pattern: "x <lo" } }],
    goal: "answer",
    needles: ["src/utils.ts:6", "if (x < lo) return lo;"],
  },
  {
    id: "list-pattern-case",
    item: 1,
    what: "list_files `*.PY`",
    turns: [{ name: "list_files", input: { pattern: "*.PY" } }],
    goal: "answer",
    needles: ["src/cart.py"],
  },
  {
    id: "list-pattern-dir",
    item: 1,
    what: "list_files `lib/**/tax.ts` (wrong directory)",
    turns: [{ name: "list_files", input: { pattern: "lib/**/tax.ts" } }],
    goal: "answer",
    needles: ["src/tax.ts"],
  },
  {
    id: "list-pattern-typo",
    item: 1,
    what: "list_files `utills.ts` (typo)",
    turns: [{ name: "list_files", input: { pattern: "utills.ts" } }],
    goal: "answer",
    needles: ["src/utils.ts"],
  },
  // 2. edit not found
  {
    id: "edit-missing-line",
    item: 2,
    what: "old_string skips a line of the file",
    turns: [
      read("src/tax.ts"),
      edit("src/tax.ts", "export function priceWithTax(price: number): number {\n  return price + tax;", "x"),
    ],
    goal: "answer",
    needles: ["const tax = price * TAX_RATE;", "4"],
  },
  {
    id: "edit-quotes",
    item: 2,
    what: "old_string with other quotes",
    turns: [
      read("src/messages.ts"),
      edit("src/messages.ts", 'export const FAREWELL = "Goodbye";', 'export const FAREWELL = "Bye";'),
    ],
    goal: "answer",
    needles: ["line 2", "FAREWELL = 'Goodbye'"],
  },
  {
    id: "edit-already-applied",
    item: 2,
    what: "the edit is already in the file",
    turns: [read("src/tax.ts"), edit("src/tax.ts", "return price * 0.95;", "return price * 0.9;")],
    goal: "answer",
    needles: ["line 9", "return price * 0.9;"],
  },
  {
    id: "edit-several-matches",
    item: 2,
    what: "old_string matches two places",
    turns: [read("src/dup.ts"), edit("src/dup.ts", "  return null;", "  return 0;")],
    goal: "answer",
    needles: ["2, 5"],
  },
  // 3. whitespace-only mismatches, applied when unique
  {
    id: "tolerant-spaces-for-tabs",
    item: 3,
    what: "spaces where the file has tabs; new_string re-indented",
    turns: [
      read("src/utils.ts"),
      edit(
        "src/utils.ts",
        "    if (x < lo) return lo;\n    if (x > hi) return hi;",
        "    if (x < lo) return lo;\n    if (x > hi) return hi;\n    if (Number.isNaN(x)) return lo;",
      ),
    ],
    goal: "file",
    expect: replaceIn(
      "src/utils.ts",
      "\tif (x > hi) return hi;\n",
      "\tif (x > hi) return hi;\n\tif (Number.isNaN(x)) return lo;\n",
    ),
    needles: ["if (x < lo) return lo;"],
  },
  {
    id: "tolerant-indent-shift",
    item: 3,
    what: "old_string without the class's indentation (Python)",
    turns: [
      read("src/cart.py"),
      edit(
        "src/cart.py",
        "def add(self, item, qty=1):\n    self.items.append((item, qty))",
        "def add(self, item, qty=1):\n    if qty > 0:\n        self.items.append((item, qty))",
      ),
    ],
    goal: "file",
    expect: replaceIn(
      "src/cart.py",
      "        self.items.append((item, qty))",
      "        if qty > 0:\n            self.items.append((item, qty))",
    ),
    needles: ["def add(self, item, qty=1):"],
  },
  {
    id: "tolerant-trailing-space",
    item: 3,
    what: "trailing spaces the file lacks",
    turns: [read("src/utils.ts"), edit("src/utils.ts", "\treturn x;   \n}", "\treturn Math.round(x);\n}")],
    goal: "file",
    expect: replaceIn("src/utils.ts", "\treturn x;", "\treturn Math.round(x);"),
    needles: ["return x;"],
  },
  {
    id: "tolerant-crlf",
    item: 3,
    what: "LF old_string in a CRLF file",
    turns: [
      read("notes/windows.txt"),
      edit("notes/windows.txt", "first line\nsecond line", "first line\nsecond line, edited"),
    ],
    goal: "file",
    expect: { "notes/windows.txt": "first line\r\nsecond line, edited\r\nthird line\r\n" },
    needles: ["second line"],
  },
  {
    id: "tolerant-escaped-quotes",
    item: 3,
    what: 'old_string with escaped quotes (`\\"`)',
    turns: [
      read("src/messages.ts"),
      edit("src/messages.ts", 'return \\"Welcome, \\" + name + \\"!\\";', 'return \\"Hi, \\" + name + \\"!\\";'),
    ],
    goal: "file",
    expect: replaceIn("src/messages.ts", '"Welcome, "', '"Hi, "'),
    needles: ["Welcome"],
  },
  {
    id: "tolerant-literal-newline",
    item: 3,
    what: "a literal `\\n` joining two lines",
    turns: [
      read("src/utils.ts"),
      edit(
        "src/utils.ts",
        "if (x < lo) return lo;\\n\\tif (x > hi) return hi;",
        "if (x < lo) return lo;\\n\\tif (x >= hi) return hi;",
      ),
    ],
    goal: "file",
    expect: replaceIn("src/utils.ts", "x > hi", "x >= hi"),
    needles: ["if (x > hi) return hi;"],
  },
  // 4. line-number prefixes
  {
    id: "prefix-in-old",
    item: 4,
    what: "read_file prefix copied into old_string",
    turns: [
      read("src/tax.ts"),
      edit("src/tax.ts", "     1\texport const TAX_RATE = 0.10;", "export const TAX_RATE = 0.2;"),
    ],
    goal: "file",
    expect: replaceIn("src/tax.ts", "0.10", "0.2"),
    needles: ["TAX_RATE = 0.10"],
  },
  {
    id: "prefix-in-new",
    item: 4,
    what: "read_file prefix copied into new_string only",
    turns: [
      read("src/tax.ts"),
      edit("src/tax.ts", "export const TAX_RATE = 0.10;", "     1\texport const TAX_RATE = 0.25;"),
    ],
    goal: "file",
    expect: replaceIn("src/tax.ts", "0.10", "0.25"),
    needles: ["TAX_RATE"],
  },
  {
    id: "prefix-colon-both",
    item: 4,
    what: "`4: ` prefixes in both strings",
    turns: [
      read("src/tax.ts"),
      edit("src/tax.ts", "4:   const tax = price * TAX_RATE;", "4:   const tax = Math.round(price * TAX_RATE);"),
    ],
    goal: "file",
    expect: replaceIn("src/tax.ts", "price * TAX_RATE;", "Math.round(price * TAX_RATE);"),
    needles: ["const tax = price * TAX_RATE;"],
  },
  {
    id: "prefix-bar-multiline",
    item: 4,
    what: "`3| ` prefixes on two lines",
    turns: [
      read("src/tax.ts"),
      edit(
        "src/tax.ts",
        "3| export function priceWithTax(price: number): number {\n4|   const tax = price * TAX_RATE;",
        "3| export function priceWithTax(price: number): number {\n4|   const tax = price * TAX_RATE * 1;",
      ),
    ],
    goal: "file",
    expect: replaceIn("src/tax.ts", "price * TAX_RATE;", "price * TAX_RATE * 1;"),
    needles: ["const tax = price * TAX_RATE;"],
  },
  // 5. elision in whole-file writes
  {
    id: "elision-rest-unchanged",
    item: 5,
    what: "write_file with `// ... rest of the file unchanged ...`",
    turns: [
      read("src/tax.ts"),
      {
        name: "write_file",
        input: {
          path: "src/tax.ts",
          content: "export const TAX_RATE = 0.2;\n\n// ... rest of the file unchanged ...\n",
        },
      },
    ],
    goal: "answer",
    expect: { "src/tax.ts": FIXTURE["src/tax.ts"]! },
    needles: ["export function priceWithTax", "edit_file"],
  },
  {
    id: "elision-existing-code",
    item: 5,
    what: "write_file with `# existing code here` (Python)",
    turns: [
      read("src/cart.py"),
      {
        name: "write_file",
        input: {
          path: "src/cart.py",
          content: "class Cart:\n    # existing code here\n\n    def clear(self):\n        self.items = []\n",
        },
      },
    ],
    goal: "answer",
    expect: { "src/cart.py": FIXTURE["src/cart.py"]! },
    needles: ["def total(self, prices):", "edit_file"],
  },
  {
    id: "write-large-deletion",
    item: 5,
    what: "write_file that drops 57 of 60 lines (allowed, said)",
    turns: [
      read("src/long.ts"),
      {
        name: "write_file",
        input: { path: "src/long.ts", content: "export const v1 = 1;\nexport const v2 = 2;\nexport const v3 = 3;\n" },
      },
    ],
    goal: "file",
    expect: { "src/long.ts": "export const v1 = 1;\nexport const v2 = 2;\nexport const v3 = 3;\n" },
    needles: ["-57"],
  },
  // 6. paths
  {
    id: "path-read-typo",
    item: 6,
    what: "read_file `src/util.ts` (it is utils.ts)",
    turns: [read("src/util.ts")],
    goal: "answer",
    needles: ["src/utils.ts"],
  },
  {
    id: "path-edit-typo",
    item: 6,
    what: "edit_file on `src/taxes.ts` (it is tax.ts)",
    turns: [edit("src/taxes.ts", "a", "b")],
    goal: "answer",
    needles: ["src/tax.ts"],
  },
  {
    id: "path-write-typo",
    item: 6,
    what: "write_file to `src/util.ts` would create a stray file",
    turns: [{ name: "write_file", input: { path: "src/util.ts", content: "export {};\n" } }],
    goal: "answer",
    expect: { "src/util.ts": null },
    needles: ["src/utils.ts"],
  },
  {
    id: "path-leading-slash",
    item: 6,
    what: "read_file `/src/tax.ts` (workspace-relative meant)",
    turns: [read("/src/tax.ts")],
    goal: "answer",
    needles: ['"src/tax.ts"'],
  },
  // 7. tool-call repair
  {
    id: "repair-name-case",
    item: 7,
    what: "tool called `Read_File`",
    turns: [{ name: "Read_File", input: { path: "src/tax.ts" } }],
    goal: "answer",
    needles: ["TAX_RATE = 0.10"],
  },
  {
    id: "repair-name-camel",
    item: 7,
    what: "tool called `readFile`",
    turns: [{ name: "readFile", input: { path: "src/tax.ts" } }],
    goal: "answer",
    needles: ["TAX_RATE = 0.10"],
  },
  {
    id: "repair-alias",
    item: 7,
    what: "`str_replace_editor` with `old_str`/`new_str`",
    turns: [
      read("src/tax.ts"),
      { name: "str_replace_editor", input: { path: "src/tax.ts", old_str: "0.10", new_str: "0.15" } },
    ],
    goal: "file",
    expect: replaceIn("src/tax.ts", "0.10", "0.15"),
    needles: [],
  },
  {
    id: "repair-single-quotes",
    item: 7,
    what: "arguments with single quotes and a trailing comma",
    turns: [
      read("src/tax.ts"),
      { name: "edit_file", rawInput: "{'path': 'src/tax.ts', 'old_string': '0.10', 'new_string': '0.15',}" },
    ],
    goal: "file",
    expect: replaceIn("src/tax.ts", "0.10", "0.15"),
    needles: [],
  },
  {
    id: "repair-double-encoded",
    item: 7,
    what: "arguments JSON-encoded twice",
    turns: [
      read("src/tax.ts"),
      {
        name: "edit_file",
        rawInput: JSON.stringify(JSON.stringify({ path: "src/tax.ts", old_string: "0.10", new_string: "0.15" })),
      },
    ],
    goal: "file",
    expect: replaceIn("src/tax.ts", "0.10", "0.15"),
    needles: [],
  },
  {
    id: "repair-field-names",
    item: 7,
    what: "`file_path`, `oldString`, `newString`",
    turns: [
      read("src/tax.ts"),
      { name: "edit_file", input: { file_path: "src/tax.ts", oldString: "0.10", newString: "0.15" } },
    ],
    goal: "file",
    expect: replaceIn("src/tax.ts", "0.10", "0.15"),
    needles: [],
  },
  {
    id: "repair-boolean-string",
    item: 7,
    what: '`replace_all: "true"`',
    turns: [read("src/dup.ts"), edit("src/dup.ts", "return null;", "return 0;", { replace_all: "true" })],
    goal: "file",
    expect: { "src/dup.ts": FIXTURE["src/dup.ts"]!.replaceAll("return null;", "return 0;") },
    needles: [],
  },
  {
    id: "repair-number-string",
    item: 7,
    what: '`offset: "9"` as a string',
    turns: [{ name: "read_file", input: { path: "src/tax.ts", offset: "9", limit: "1" } }],
    goal: "answer",
    needles: ["     9\t  return price * 0.9;"],
  },
  {
    id: "repair-truncated",
    item: 7,
    what: "arguments cut off inside new_string: never completed by guessing",
    turns: [
      read("src/tax.ts"),
      { name: "edit_file", rawInput: '{"path": "src/tax.ts", "old_string": "0.10", "new_string": "0.1' },
    ],
    goal: "answer",
    expect: { "src/tax.ts": FIXTURE["src/tax.ts"]! },
    needles: ["cut off"],
  },
  {
    id: "repair-missing-field",
    item: 7,
    what: "edit_file without new_string: one readable line",
    turns: [read("src/tax.ts"), { name: "edit_file", input: { path: "src/tax.ts", old_string: "0.10" } }],
    goal: "answer",
    needles: ["new_string is missing"],
  },
  // 8. nudges
  {
    id: "nudge-code-in-prose",
    item: 8,
    what: "the model answers with code in prose and stops",
    turns: [
      { text: "Change the rate like this:\n```ts\nexport const TAX_RATE = 0.2;\n```" },
      read("src/tax.ts"),
      edit("src/tax.ts", "0.10", "0.2"),
    ],
    goal: "file",
    expect: replaceIn("src/tax.ts", "0.10", "0.2"),
    needles: [],
  },
  {
    id: "nudge-repeated-failure",
    item: 8,
    what: "the same failing call three times",
    turns: [
      read("src/tax.ts"),
      edit("src/tax.ts", "RATE=0.1", "RATE=0.2"),
      edit("src/tax.ts", "RATE=0.1", "RATE=0.2"),
      edit("src/tax.ts", "RATE=0.1", "RATE=0.2"),
    ],
    goal: "answer",
    needles: ["3 times", "change approach"],
  },
];

/** The approver module of the checkout at `root`: core/policy/ since the folder move, agent/ before it (the baselines). */
export async function importApprover(root: string): Promise<{ nobodyApprover: unknown }> {
  const path = ["core/policy/approver.ts", "agent/approver.ts"].map((p) => join(root, p)).find((p) => existsSync(p));
  if (!path) throw new Error(`no approver module in ${root} (core/policy/approver.ts or agent/approver.ts)`);
  return import(path);
}

/** An overlay entry as a replay reads it (the project may be an older checkout, so only this shape is assumed). */
export interface StagedEntry {
  real: string;
  after: { bytes: Uint8Array } | null;
}

/**
 * The workspace as approval would leave it: `view(path)` is a staged file's content (null if deleted or absent),
 * else the fixture's; `wrong` is true when anything staged is not a path of `expected` with its expected content.
 */
export function stagedView(
  wsRoot: string,
  entries: readonly StagedEntry[],
  files: Record<string, string>,
  expected: Record<string, string | null>,
): { view: (path: string) => string | null; wrong: boolean } {
  const staged = new Map<string, Uint8Array | null>();
  for (const entry of entries) staged.set(entry.real, entry.after ? entry.after.bytes : null);
  const view = (path: string): string | null => {
    const real = join(wsRoot, path);
    if (staged.has(real)) {
      const bytes = staged.get(real);
      return bytes ? new TextDecoder().decode(bytes) : null;
    }
    return Object.hasOwn(files, path) ? files[path]! : null;
  };
  let wrong = false;
  for (const real of staged.keys()) {
    const path = real.slice(wsRoot.length + 1);
    if (!Object.hasOwn(expected, path) || view(path) !== expected[path]) wrong = true;
  }
  return { view, wrong };
}

/** Plays every mode against the project checked out at `root`; each in a fresh workspace and home. */
export async function replay(root: string, modes: RecoveryMode[] = MODES): Promise<ModeResult[]> {
  const { AgentRun } = await import(join(root, "app/agent-run.ts"));
  const { createRuntime } = await import(join(root, "app/runtime.ts"));
  const { ScriptedModel, lastToolResults } = await import(join(root, "ai/scripted-model.ts"));
  const { nobodyApprover } = await importApprover(root);
  const out: ModeResult[] = [];
  for (const mode of modes) {
    const workspace = mkdtempSync(join(tmpdir(), "pencil-recovery-ws-"));
    const home = mkdtempSync(join(tmpdir(), "pencil-recovery-home-"));
    try {
      const files = { ...FIXTURE, ...mode.files };
      for (const [path, content] of Object.entries(files)) {
        mkdirSync(dirname(join(workspace, path)), { recursive: true });
        writeFileSync(join(workspace, path), content);
      }
      const runtime = createRuntime({ env: { HOME: home, PENCIL_HOME: join(home, ".pencil") }, workspace });
      const turns = [
        ...mode.turns.map((t) => ("text" in t ? { text: t.text } : { toolCalls: [t] })),
        { text: "Done." },
      ];
      const model = new ScriptedModel(turns, { name: "weak" });
      const models = { model, labels: [model.label], current: () => model.label, contextWindow: 100_000 };
      const run = await AgentRun.start(
        runtime,
        "agent",
        "Fix the shop",
        { approver: nobodyApprover, emit: () => {} },
        { models, maxSteps: 20 },
      );
      const answers: string[] = [];
      for (let i = 1; i < model.prompts.length; i++)
        for (const r of lastToolResults(model.prompts[i])) answers.push(r.output);
      const expected = mode.expect ?? {};
      const named = Object.keys(expected);
      const { view, wrong } = stagedView(runtime.ws.root, run.overlay.list(), files, expected);
      const fileOk = named.every((p) => view(p) === expected[p]);
      const answer = answers.at(-1) ?? "";
      const helpful = mode.needles.every((n) => answer.includes(n));
      const verdict: Verdict = wrong
        ? "wrong"
        : mode.goal === "file" && fileOk && named.length > 0
          ? "correct"
          : helpful && mode.needles.length > 0
            ? "recoverable"
            : "generic";
      out.push({ id: mode.id, verdict, answer, answers, files: Object.fromEntries(named.map((p) => [p, view(p)])) });
    } finally {
      rmSync(workspace, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    }
  }
  return out;
}
