import { describe, expect, test } from "bun:test";
import { symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compilePolicy, decide, parseRule } from "../../core/policy/policy.ts";
import { findRipgrep, ripgrepArgs, runRipgrep } from "../../tools/search/ripgrep.ts";
import { compilePattern } from "../../tools/search/rust-regex.ts";
import { createSearchTool } from "../../tools/search.ts";
import type { ToolLimits } from "../../core/tool-limits.ts";
import { tempDir, writeTree } from "../support/temp.ts";
import { failure, toolContext } from "../support/tool-context.ts";

/** A temporary workspace holding `files` (removed after the run). */
function tree(files: Record<string, string | Uint8Array>): string {
  const root = tempDir("pencil-search-");
  writeTree(root, files);
  return root;
}

const rg = findRipgrep();
if (!rg)
  console.log(
    "search.test: ripgrep (rg) is not on PATH; the tests run the JS search only and the rg-vs-JS comparison is skipped.",
  );
/** Every test runs once per engine: the JS search always, rg when installed. */
const engines: { name: string; rgPath: string | null }[] = [
  { name: "js", rgPath: null },
  ...(rg ? [{ name: "rg", rgPath: rg }] : []),
];

async function search(
  root: string,
  rgPath: string | null,
  input: { pattern: string; path?: string; glob?: string },
  limits: Partial<ToolLimits> = {},
) {
  const t = toolContext(root, { limits });
  return t.run(createSearchTool({ rgPath }), input);
}

for (const engine of engines) {
  describe(`search (${engine.name})`, () => {
    const run = (
      root: string,
      input: { pattern: string; path?: string; glob?: string },
      limits: Partial<ToolLimits> = {},
    ) => search(root, engine.rgPath, input, limits);

    test("matching lines as path:line:text, sorted by path then line", async () => {
      const root = tree({
        "b.ts": "const needle = 1;\nnothing\nneedle again\n",
        "a/x.ts": "x needle\n",
        "a-b.ts": "needle in a-b\n",
        "c.md": "no match here\n",
      });
      expect(await run(root, { pattern: "needle" })).toBe(
        ["a/x.ts:1:x needle", "a-b.ts:1:needle in a-b", "b.ts:1:const needle = 1;", "b.ts:3:needle again"].join("\n"),
      );
    });

    test("glob: a bare name glob matches at any depth, one with / is relative to path", async () => {
      const root = tree({ "src/a.ts": "hit\n", "src/deep/b.ts": "hit\n", "src/c.js": "hit\n", "top.ts": "hit\n" });
      expect(await run(root, { pattern: "hit", glob: "*.ts" })).toBe(
        "src/a.ts:1:hit\nsrc/deep/b.ts:1:hit\ntop.ts:1:hit",
      );
      expect(await run(root, { pattern: "hit", glob: "src/*.ts" })).toBe("src/a.ts:1:hit");
      expect(await run(root, { pattern: "hit", path: "src", glob: "deep/*.ts" })).toBe("src/deep/b.ts:1:hit");
      expect(await run(root, { pattern: "hit", glob: "*.{js,md}" })).toBe("src/c.js:1:hit");
    });

    test("path: a directory restricts the search, a file is searched alone", async () => {
      const root = tree({ "src/a.ts": "hit a\n", "lib/b.ts": "hit b\n" });
      expect(await run(root, { pattern: "hit", path: "lib" })).toBe("lib/b.ts:1:hit b");
      expect(await run(root, { pattern: "hit", path: "src/a.ts" })).toBe("src/a.ts:1:hit a");
      expect((await failure(run(root, { pattern: "hit", path: "nope" }))).message).toContain("nope does not exist");
    });

    test(".gitignore: root and nested files, negation, and the root's rules when searching a subdirectory", async () => {
      const root = tree({
        ".gitignore": "*.log\nbuild/\n/only-root.txt\n",
        "app.log": "hit\n",
        "build/out.js": "hit\n",
        "only-root.txt": "hit\n",
        "sub/only-root.txt": "hit\n",
        "sub/.gitignore": "!keep.log\nlocal/\n",
        "sub/keep.log": "hit\n",
        "sub/other.log": "hit\n",
        "sub/local/x.ts": "hit\n",
        "sub/deep/y.log": "hit\n",
        "sub/deep/node.ts": "hit\n",
        ".hidden/h.ts": "hit\n",
        ".git/config": "hit\n",
      });
      const expected = [
        ".hidden/h.ts:1:hit",
        "sub/deep/node.ts:1:hit",
        "sub/keep.log:1:hit",
        "sub/only-root.txt:1:hit",
      ];
      expect(await run(root, { pattern: "hit" })).toBe(expected.join("\n"));
      expect(await run(root, { pattern: "hit", path: "sub" })).toBe(expected.slice(1).join("\n"));
      expect(await run(root, { pattern: "hit", path: "sub/deep" })).toBe("sub/deep/node.ts:1:hit");
    });

    test("a directory asked for explicitly is searched even when ignored; its own .gitignore still applies", async () => {
      const root = tree({
        ".gitignore": "node_modules/\n",
        "node_modules/pkg/index.js": "hit\n",
        "node_modules/pkg/.gitignore": "*.map\n",
        "node_modules/pkg/index.js.map": "hit\n",
        "node_modules/pkg/lib/util.js": "hit\n",
        "src/a.ts": "hit\n",
      });
      expect(await run(root, { pattern: "hit" })).toBe("src/a.ts:1:hit");
      expect(await run(root, { pattern: "hit", path: "node_modules/pkg" })).toBe(
        "node_modules/pkg/index.js:1:hit\nnode_modules/pkg/lib/util.js:1:hit",
      );
    });

    test(".env files never appear, even when they match; .env.example does", async () => {
      const root = tree({
        ".env": "API_KEY=secret\n",
        ".env.local": "API_KEY=secret\n",
        "sub/.env.production": "API_KEY=secret\n",
        ".env.example": "API_KEY=placeholder\n",
        "config.ts": "const API_KEY = process.env.API_KEY;\n",
      });
      const out = await run(root, { pattern: "API_KEY" });
      expect(out).toBe(".env.example:1:API_KEY=placeholder\nconfig.ts:1:const API_KEY = process.env.API_KEY;");
      expect(out).not.toContain("secret");
      // Near misses must not leak them either.
      const miss = await run(root, { pattern: "api_key=SECRET" });
      expect(miss).not.toContain("secret\n");
      expect(miss).toStartWith("No matches");
      expect(miss).not.toContain(".env.local");
    });

    test("the policy's visibility hides denied paths and their subtrees", async () => {
      const root = tree({ "secret/key.txt": "hit\n", "notes/private.md": "hit\n", "ok.txt": "hit\n" });
      const t = toolContext(root);
      const policy = compilePolicy({
        workspaceRoot: root,
        home: tmpdir(),
        pencilHome: join(root, ".pencil-home"),
        rules: [parseRule("Read(secret/**)", "deny", "test"), parseRule("Read(**/private.md)", "deny", "test")],
      });
      t.ctx.visible = (real) => decide(policy, { tool: "search", access: "read", real }).decision !== "deny";
      expect(await t.run(createSearchTool({ rgPath: engine.rgPath }), { pattern: "hit" })).toBe("ok.txt:1:hit");
    });

    test("staged content is searched: created and edited files from the overlay, deleted ones gone", async () => {
      const root = tree({
        "a.ts": "old hit\n",
        "b.ts": "hit\n",
        "c.ts": "nothing\n",
        ".gitignore": "*.md\n",
        "doc.md": "hit in docs\n",
      });
      const t = toolContext(root);
      const enc = new TextEncoder();
      t.overlay.writeBytes(join(root, "a.ts"), enc.encode("first\nnew hit\n"));
      t.overlay.remove(join(root, "b.ts"));
      t.overlay.writeBytes(join(root, "new/d.ts"), enc.encode("hit in a new dir\n"));
      expect(await t.run(createSearchTool({ rgPath: engine.rgPath }), { pattern: "hit" })).toBe(
        "a.ts:2:new hit\nnew/d.ts:1:hit in a new dir",
      );
      // A staged .gitignore is obeyed too, both what it adds and what it no longer ignores.
      t.overlay.writeBytes(join(root, ".gitignore"), enc.encode("new/\n"));
      expect(await t.run(createSearchTool({ rgPath: engine.rgPath }), { pattern: "hit" })).toBe(
        "a.ts:2:new hit\ndoc.md:1:hit in docs",
      );
    });

    test("results are capped, with how many more and how to narrow", async () => {
      const root = tree({
        "a.txt": Array.from({ length: 150 }, (_, i) => `hit ${i}`).join("\n"),
        "b.txt": "hit\n".repeat(100),
      });
      const out = await run(root, { pattern: "hit" }, { searchMaxMatches: 200 });
      const lines = out.split("\n");
      expect(lines.length).toBe(201);
      expect(lines[149]).toBe("a.txt:150:hit 149");
      expect(lines[199]).toBe("b.txt:50:hit");
      expect(lines[200]).toBe(
        "[200 of 250 matching lines shown; 50 more. Narrow the search with path, glob or a more specific pattern.]",
      );
    });

    test("long lines are cut with a marker", async () => {
      const root = tree({ "min.js": `var hit=${"x".repeat(5000)}\n` });
      const out = await run(root, { pattern: "hit" }, { maxLineChars: 40 });
      expect(out).toBe(`min.js:1:var hit=${"x".repeat(32)}… [line cut: 5,008 chars]`);
    });

    test("near misses: case, whitespace and literal text are suggested when they match", async () => {
      const root = tree({ "a.ts": "function parseConfig(input) {}\nconst Parse = 1;\n", "b.ts": "return  value;\n" });
      const ci = await run(root, { pattern: "parseconfig" });
      expect(ci).toContain("No matches for /parseconfig/ in the workspace. Case-insensitive, it matches 1 line, e.g.:");
      expect(ci).toContain("  a.ts:1: function parseConfig(input) {}");
      expect(ci).toContain('Search again with pattern "(?i)parseconfig"');
      const ws = await run(root, { pattern: "return value" });
      expect(ws).toContain("With whitespace relaxed (\\s+), it matches 1 line");
      expect(ws).toContain("b.ts:1: return  value;");
      const lit = await run(root, { pattern: "parseConfig(input)" });
      expect(lit).toContain("Taken literally (regex characters escaped), it matches 1 line");
      const none = await run(root, { pattern: "zebra" });
      expect(none).toBe(
        "No matches for /zebra/ in the workspace. Check the spelling, search for a shorter part of it, or widen path or glob.",
      );
    });

    test("an invalid or unsupported regex is a ToolError that says so", async () => {
      const root = tree({ "a.ts": "x\n" });
      const bad = await failure(run(root, { pattern: "foo(" }));
      expect(bad.message).toContain("Invalid regex /foo(/: unclosed (");
      expect(bad.message).toContain("escape it: foo\\(");
      expect((await failure(run(root, { pattern: "(?<=a)b" }))).message).toContain(
        "lookahead and lookbehind are not supported",
      );
      expect((await failure(run(root, { pattern: "(a)\\1" }))).message).toContain("backreferences are not supported");
    });

    test("binary files are skipped (a NUL early or late); UTF-16, BOM, CRLF and Latin-1 text is searched like rg does", async () => {
      const late = new Uint8Array(200_000).fill(0x61);
      late.set(new TextEncoder().encode("hit early\n"), 0);
      late[150_000] = 0;
      const utf16 = new Uint8Array([0xff, 0xfe, ...[..."hit utf16\n"].flatMap((c) => [c.charCodeAt(0), 0])]);
      const root = tree({
        "bin.dat": new Uint8Array([0x68, 0x69, 0x74, 0, 1, 2]),
        "late.txt": late,
        "u16.txt": utf16,
        "bom.txt": "\ufeffhit bom\n",
        "crlf.txt": "hit crlf\r\nsecond hit\r\n",
        "latin.txt": new Uint8Array([0x68, 0x69, 0x74, 0x20, 0x63, 0x61, 0x66, 0xe9, 0x0a]),
      });
      expect(await run(root, { pattern: "hit" })).toBe(
        [
          "bom.txt:1:hit bom",
          "crlf.txt:1:hit crlf",
          "crlf.txt:2:second hit",
          "latin.txt:1:hit caf\ufffd",
          "u16.txt:1:hit utf16",
        ].join("\n"),
      );
      expect(await run(root, { pattern: "crlf$" })).toBe("crlf.txt:1:hit crlf");
      // An invalid byte is matched by nothing, as in Rust: not by `.`, not by a negated class.
      expect(await run(root, { pattern: "caf." })).toStartWith("No matches");
      expect(await run(root, { pattern: "caf[^x]" })).toStartWith("No matches");
    });

    test("Unicode classes mean what they mean in Rust: \\w, \\d and \\b are Unicode-aware", async () => {
      const root = tree({ "u.txt": "café au lait\nnaïve\nnum ٣٤ here\nplain word\n" });
      expect(await run(root, { pattern: "\\bcafé\\b" })).toBe("u.txt:1:café au lait");
      expect(await run(root, { pattern: "^\\w+$" })).toBe("u.txt:2:naïve");
      expect(await run(root, { pattern: "\\d\\d" })).toBe("u.txt:3:num ٣٤ here");
      expect(await run(root, { pattern: "(?i)PLAIN\\s+WORD" })).toBe("u.txt:4:plain word");
    });

    test("symbolic links are not followed", async () => {
      const root = tree({ "real/a.ts": "hit\n" });
      const outside = tree({ "secret.txt": "hit outside\n" });
      symlinkSync(join(root, "real"), join(root, "link"));
      symlinkSync(join(outside, "secret.txt"), join(root, "s.txt"));
      expect(await run(root, { pattern: "hit" })).toBe("real/a.ts:1:hit");
    });
  });
}

describe("ripgrep arguments", () => {
  test.skipIf(!rg)("rg never opens secret env files (only .env.example/.sample/.template), nor .git", async () => {
    const names = [
      ".env",
      ".env.",
      ".env.local",
      ".env.e",
      ".env.ex",
      ".env.examplex",
      ".env.sampl",
      ".env.t",
      ".env.example",
      ".env.sample",
      ".env.template",
      ".envrc",
      "x.env",
      ".ENV",
      ".Env.Local",
      ".ENV.EXAMPLE",
    ];
    const files: Record<string, string> = {
      ".git/config": "SECRET\n",
      "sub/.env": "SECRET\n",
      "sub/.env.production/f": "SECRET\n",
    };
    for (const n of names) files[n] = "SECRET\n";
    const root = tree(files);
    const args = ripgrepArgs({ pattern: "SECRET", target: null, maxFileBytes: 1 << 20, glob: null, ignoreFile: null });
    const seen: string[] = [];
    await runRipgrep(rg!, args, root, { file: (path) => void seen.push(path), binary: () => {} });
    expect(seen.sort()).toEqual([".ENV.EXAMPLE", ".env.example", ".env.sample", ".env.template", ".envrc", "x.env"]);
  });
});

describe("pattern translation", () => {
  test("Rust syntax is normalised for rg and translated for JS", () => {
    expect(compilePattern("(?P<name>a)\\:").rust).toBe("(a)\\x{3A}");
    expect(compilePattern("a|b(?i)c|d").line.source).toBe("a|b(?i:c)|(?i:d)");
    expect(compilePattern("a|b(?i)c|d").line.test("xD")).toBe(true);
    expect(compilePattern("ab(?i)c|d").line.test("aD")).toBe(true);
    expect(compilePattern("[[:upper:]&&[^A]]").line.test("A")).toBe(false);
    expect(compilePattern("[[:upper:]&&[^A]]").line.test("B")).toBe(true);
    expect(compilePattern("[a-c~~b-d]").line.test("b")).toBe(false);
    expect(compilePattern("[a-c~~b-d]").line.test("d")).toBe(true);
    expect(compilePattern("\\p{Greek}").line.test("λ")).toBe(true);
    expect(compilePattern("\\x{E9}").line.test("é")).toBe(true);
  });
});

describe("search: rg and JS agree", () => {
  test.skipIf(!rg)("identical output on a generated tree, for many patterns, paths and globs", async () => {
    const root = generatedTree();
    const limits = { maxFileBytes: 150_000, searchMaxMatches: 100_000, maxLineChars: 300 };
    const patterns = [
      "hit",
      "(?i)HIT",
      "\\bword\\b",
      "\\d+",
      "^\\s*import",
      "end$",
      "[[:upper:]]{3}",
      "caf.",
      "\\p{Greek}+",
      "TODO|FIXME",
      "[^a-z ]x",
      "é",
      "\\W\\W\\W",
      "^$",
      "^.{0,3}$",
      "(?i)straße",
      "\\w+\\s+\\w+\\s*;$",
      "a.c",
      "secret",
      "[\\x{0}-\\x{1F}]",
      "\\bnaïve\\b",
      "٣",
    ];
    const queries: { pattern: string; path?: string; glob?: string }[] = [
      ...patterns.map((pattern) => ({ pattern })),
      { pattern: "hit", path: "src" },
      { pattern: "hit", path: "src/mod1" },
      { pattern: "hit", glob: "*.ts" },
      { pattern: "hit", glob: "src/**/*.js" },
      { pattern: "hit", path: "src", glob: "mod2/**" },
      { pattern: "hit", glob: "!*.ts" },
      { pattern: "hit", glob: "*.{md,txt}" },
    ];
    let compared = 0;
    for (const q of queries) {
      const viaJs = await search(root, null, q, limits);
      const viaRg = await search(root, rg, q, limits);
      if (viaRg !== viaJs) {
        const a = viaJs.split("\n");
        const b = viaRg.split("\n");
        const onlyJs = a.filter((l) => !b.includes(l)).slice(0, 5);
        const onlyRg = b.filter((l) => !a.includes(l)).slice(0, 5);
        throw new Error(
          `rg and JS differ for ${JSON.stringify(q)}:\nonly JS: ${JSON.stringify(onlyJs)}\nonly rg: ${JSON.stringify(onlyRg)}`,
        );
      }
      if (!viaJs.startsWith("No matches")) compared++;
    }
    expect(compared).toBeGreaterThan(20);
  });
});

/** A deterministic tree with everything the two engines must agree on: ignore files, hidden and binary files, encodings, links, long lines. */
function generatedTree(): string {
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const words = [
    "hit",
    "word",
    "import",
    "end",
    "TODO",
    "FIXME",
    "café",
    "naïve",
    "straße",
    "STRASSE",
    "λόγος",
    "٣٤",
    "abc",
    "a.c",
    "x",
    "secret",
    "ABC",
    "Hit",
    "  ",
  ];
  const line = () =>
    Array.from({ length: 1 + rand(8) }, () => words[rand(words.length)]).join(rand(4) === 0 ? "  " : " ") +
    (rand(5) === 0 ? ";" : "");
  const text = (lines: number, eol = "\n") =>
    Array.from({ length: lines }, () => (rand(10) === 0 ? "" : line())).join(eol) + eol;
  const files: Record<string, string | Uint8Array> = {
    ".gitignore": "*.log\n/build/\nsrc/**/gen/\n!src/mod1/keep.log\n# comment\n\\#hash.txt\n",
    "src/.gitignore": "*.tmp\n!important.tmp\nmod3/\n",
    "src/mod2/.gitignore": "*.js\n",
    ".env": "secret hit\n",
    "src/.env.local": "secret hit\n",
    ".env.example": "hit example\n",
    ".git/HEAD": "hit\n",
    ".hidden/h.ts": text(5),
    "#hash.txt": "hit\n",
    "build/out.js": "hit\n",
    "bin.dat": new Uint8Array([104, 105, 116, 0, 1, 2, 3]),
    "crlf.ts": text(20, "\r\n"),
    "mixed.txt": "hit\rend\nlone\rcr hit end\r\nlast hit end\r",
    "bom.ts": "\ufeff" + text(5),
    "u16.txt": new Uint8Array([0xff, 0xfe, ...[..."hit utf16 end\n"].flatMap((c) => [c.charCodeAt(0), 0])]),
    "latin1.txt": new Uint8Array([104, 105, 116, 32, 99, 97, 102, 0xe9, 10, 0xe2, 0x82, 120, 32, 97, 0xff, 99, 10]),
    "big.txt": text(8000),
    "long.js": `hit ${"x".repeat(2000)} end\n`,
    "empty.txt": "",
    "noeol.txt": "hit end",
  };
  for (let m = 1; m <= 4; m++) {
    for (let f = 0; f < 12; f++) {
      const ext = [".ts", ".js", ".md", ".txt", ".log", ".tmp"][rand(6)];
      files[`src/mod${m}/${f % 3 === 0 ? "deep/" : ""}file${f}${ext}`] = text(20 + rand(40));
    }
    files[`src/mod${m}/gen/g.ts`] = text(5);
  }
  files["src/mod1/keep.log"] = text(5);
  files["src/important.tmp"] = text(5);
  const late = new Uint8Array(100_000).fill(0x61);
  late.set(new TextEncoder().encode("hit before the NUL\n"));
  late[90_000] = 0;
  files["late.bin"] = late;
  const root = tree(files);
  symlinkSync(join(root, "src"), join(root, "src-link"));
  symlinkSync(join(root, "crlf.ts"), join(root, "link.ts"));
  return root;
}
