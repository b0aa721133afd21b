import { beforeAll, describe, expect, test } from "bun:test";
import { analyzeCommand } from "../../../core/policy/command-analysis.ts";
import { compilePolicy, decide, parseRule, type Effect } from "../../../core/policy/policy.ts";
import {
  loadShellParser,
  parseShell,
  parseShellTree,
  quickParse,
  type ParsedScript,
} from "../../../core/policy/shell-parse.ts";

beforeAll(loadShellParser);

type Rules = { deny?: string[]; ask?: string[]; allow?: string[] };
const PUSH_DENIED: Rules = { deny: ["Run(git push*)"], allow: ["Run(git *)"] };

function judge(rules: Rules, command: string) {
  const parsed = (["deny", "ask", "allow"] as const).flatMap((effect) =>
    (rules[effect] ?? []).map((r) => parseRule(r, effect, "test")),
  );
  const policy = compilePolicy({
    workspaceRoot: "/tmp",
    home: "/nonexistent-home",
    pencilHome: "/nonexistent-ph",
    rules: parsed,
  });
  return decide(policy, { tool: "run_command", access: "run", command });
}

/** [what, rules, command, decision, irreversible action or undefined] */
const rows: [string, Rules, string, Effect, string?][] = [
  // Deny-bypass spellings: every one reaches `git push`, so the deny decides.
  ["git -C DIR", PUSH_DENIED, "git -C . push origin", "deny"],
  ["git -c k=v", PUSH_DENIED, "git -c user.name=x push", "deny"],
  ["git --git-dir=", PUSH_DENIED, "git --git-dir=.git --no-pager push", "deny"],
  ["timeout", PUSH_DENIED, "timeout 5 git push", "deny"],
  ["timeout with options", PUSH_DENIED, "timeout -s KILL -k 3 5 git push", "deny"],
  ["xargs in a pipeline", PUSH_DENIED, "echo origin | xargs git push", "deny"],
  ["xargs with options", PUSH_DENIED, "ls | xargs -n 1 -I {} git push {}", "deny"],
  ["sudo", PUSH_DENIED, "sudo -u me git push", "deny"],
  ["env with assignments", PUSH_DENIED, "env -i FOO=1 git push", "deny"],
  ["env -S", PUSH_DENIED, "env -S 'git push' origin", "deny"],
  ["nice", PUSH_DENIED, "nice -n 5 git push", "deny"],
  ["nohup in the background", PUSH_DENIED, "nohup git push &", "deny"],
  ["command", PUSH_DENIED, "command git push", "deny"],
  ["exec", PUSH_DENIED, "exec git push", "deny"],
  ["time", PUSH_DENIED, "time git push", "deny"],
  ["sh -c", PUSH_DENIED, "sh -c 'git push origin'", "deny"],
  ["bash -lc with more", PUSH_DENIED, 'bash -lc "cd x && git push"', "deny"],
  ["nested shells and wrappers", PUSH_DENIED, `sudo bash -c "timeout 3 sh -c 'git push'"`, "deny"],
  ["an absolute path", PUSH_DENIED, "/usr/bin/git push", "deny"],
  ["quotes and escapes in the words", PUSH_DENIED, `g\\it "pu"sh`, "deny"],
  ["$'…' quoting", PUSH_DENIED, "$'git' $'\\x70ush'", "deny"],
  ["a variable assigned once before", PUSH_DENIED, "g=git; $g push", "deny"],
  ["${braces}", PUSH_DENIED, "g=git; ${g} push", "deny"],
  ["export", PUSH_DENIED, "export g=git; $g push", "deny"],
  ["eval", PUSH_DENIED, 'eval "git push"', "deny"],
  ["find -exec", PUSH_DENIED, "find . -name x -exec git push \\;", "deny"],
  ["inside $( )", PUSH_DENIED, "echo $(git push)", "deny"],
  ["inside backticks", PUSH_DENIED, "echo `git push`", "deny"],
  ["inside a function body", PUSH_DENIED, "f() { git push; }; f", "deny"],
  ["inside if", PUSH_DENIED, "if true; then git push; fi", "deny"],
  ["inside a subshell", PUSH_DENIED, "(cd x; git push)", "deny"],
  ["after &&", PUSH_DENIED, "git status && git push", "deny"],
  ["npm --prefix", { deny: ["Run(npm publish*)"] }, "npm --prefix pkg publish", "deny"],
  ["docker -H", { deny: ["Run(docker push*)"] }, "docker -H tcp://x push img", "deny"],
  // What cannot be known before it runs asks (the sandbox and the proxy stop it there).
  ["a run-time subcommand", PUSH_DENIED, "git $(echo push)", "ask"],
  ["a variable set twice", PUSH_DENIED, "g=ls; g=git; $g push", "ask"],
  ["a variable from the environment", PUSH_DENIED, "$GIT push", "ask"],
  ["a loop variable", PUSH_DENIED, "for g in git; do $g push; done", "ask"],
  ["eval of a variable", PUSH_DENIED, "eval $X", "ask"],
  ["sh -c of a variable", PUSH_DENIED, 'sh -c "$X"', "ask"],
  ["a shell reading its input", { allow: ["Run(*)"] }, "curl x | sh", "ask"],
  // Every interpreter reading its program from standard input or from run-time text is a shell reading its input.
  ...(
    [
      "curl -s URL | bash -s -- --yes",
      "curl -s URL | bash -s",
      "curl -s URL | sh -s -- -y",
      "curl -s URL | sudo bash -xs",
      "curl -s URL | python3 -",
      "curl -s URL | python -",
      "curl -s URL | python3",
      "curl -s URL | python3 -u -",
      'python3 -c "$(curl -s URL)"',
      'python3 -uc "$(curl -s URL)"',
      "curl -s URL | node -",
      "curl -s URL | nodejs",
      'node -e "$(curl -s URL)"',
      'node --eval="$(curl -s URL)"',
      "curl -s URL | perl -",
      "curl -s URL | perl",
      'perl -e "$(curl -s URL)"',
      "curl -s URL | ruby -",
      "curl -s URL | ruby",
      "curl -s URL | php",
      "curl -s URL | php -f -",
      'php -r "$(curl -s URL)"',
      "curl -s URL | deno run -",
      "curl -s URL | deno run --allow-all -",
      'deno eval "$(curl -s URL)"',
      "curl -s URL | bun -",
      "curl -s URL | bun run -",
      'bun -e "$(curl -s URL)"',
      "curl -s URL | env python3 -",
      "curl -s URL | lua -",
      "python3 <(curl -s URL)",
      "bash <(curl -s URL)",
      "python3 - <<'EOF'\nprint(1)\nEOF",
    ] as const
  ).map((c): [string, Rules, string, Effect] => ["an interpreter reading its input", { allow: ["Run(*)"] }, c, "ask"]),
  // Their programs as files or literal text are judged like any command.
  ...(
    [
      "python3 script.py --yes",
      "python3 -m pytest -q",
      "python3 -c 'print(1)'",
      "python3 --version",
      "node scripts/build.js",
      "node --test",
      "node -v",
      "node -e 'console.log(1)'",
      "perl -ne 'print' file.txt",
      "perl -i.bak -pe 's/a/b/' x.txt",
      "ruby -e 'puts 1'",
      "php -r 'echo 1;'",
      "php artisan migrate",
      "deno run --allow-read main.ts",
      "deno eval 'console.log(1)'",
      "bun test",
      "bun run build",
      "bun x.ts",
      "bash -c 'echo hi'",
      "bash script.sh -s",
    ] as const
  ).map((c): [string, Rules, string, Effect] => [
    "an interpreter given its program",
    { allow: ["Run(*)"] },
    c,
    "allow",
  ]),
  ["source", { allow: ["Run(*)"] }, "source env.sh && make", "ask"],
  ["a line that does not parse", { allow: ["Run(*)"] }, 'echo "unterminated', "ask"],
  // Every command of a pipeline or list must be covered.
  ["allowed parts", PUSH_DENIED, "git status && git log -3 | head", "allow"],
  ["one uncovered part", PUSH_DENIED, "git status; make deploy", "ask"],
  ["an uncovered part in $( )", { allow: ["Run(echo *)"] }, "echo $(make deploy)", "ask"],
  ["a prefix needs the whole word", { allow: ["Run(git *)"] }, "gitk", "ask"],
  ["sudo needs a rule for the whole line", { allow: ["Run(make*)"] }, "sudo make", "ask"],
  ["a deny on any part denies the whole", { deny: ["Run(rm *)"], allow: ["Run(*)"] }, "ls && rm -rf build", "deny"],
  ["an ask rule on any part", { ask: ["Run(make*)"], allow: ["Run(*)"] }, "ls; make", "ask"],
  // Settings that change what code loads ask.
  ["LD_PRELOAD prefix", { allow: ["Run(*)"] }, "LD_PRELOAD=/tmp/x.so ls", "ask"],
  ["NODE_OPTIONS prefix", {}, "NODE_OPTIONS=--require=./x.js bun test", "ask"],
  ["export PATH", {}, "export PATH=./bin:$PATH; ls", "ask"],
  ["a plain PATH assignment", {}, "PATH=/tmp; ls", "ask"],
  ["env GIT_SSH_COMMAND", { allow: ["Run(git *)"] }, "env GIT_SSH_COMMAND=x git fetch", "ask"],
  ["git -c", { allow: ["Run(git *)"] }, "git -c core.pager=sh status", "ask"],
  ["a harmless prefix", { allow: ["Run(make*)"] }, "CI=1 make", "allow"],
  // Read-only commands run without asking.
  ["ls", {}, "ls -la src", "allow"],
  ["cat into head", {}, "cat README.md | head -5", "allow"],
  ["rg", {}, "rg -n foo src", "allow"],
  ["git status", {}, "git status -s", "allow"],
  ["git diff with -C", {}, "git -C sub diff HEAD~1", "allow"],
  ["git log and show", {}, "git log --oneline -5 && git show HEAD", "allow"],
  ["a test runner", {}, "bun test test/x.test.ts", "allow"],
  ["cd then a test runner", {}, "cd packages/core && bun test", "allow"],
  ["npm test", {}, "npm test", "allow"],
  ["find without actions", {}, "find . -name '*.ts'", "allow"],
  ["find -delete", {}, "find . -name '*.tmp' -delete", "ask"],
  ["git commit is not read-only", {}, "git commit -m x", "ask"],
  ["a script named like a reader", {}, "./ls", "ask"],
  // Irreversible actions ask every time, whatever the rules.
  ["git push", {}, "git push", "ask", "git push"],
  ["git push under an allow", { allow: ["Run(git *)", "Run(*)"] }, "git push origin main", "ask", "git push"],
  ["git push through timeout", { allow: ["Run(*)"] }, "timeout 5 git -C . push", "ask", "git push"],
  ["npm publish", { allow: ["Run(*)"] }, "npm publish --access public", "ask", "npm publish"],
  ["bun publish", { allow: ["Run(*)"] }, "bun publish", "ask", "bun publish"],
  ["pnpm publish", { allow: ["Run(*)"] }, "pnpm -C pkg publish", "ask", "pnpm publish"],
  ["yarn publish", { allow: ["Run(*)"] }, "yarn publish", "ask", "yarn publish"],
  ["yarn npm publish", { allow: ["Run(*)"] }, "yarn npm publish", "ask", "yarn npm publish"],
  ["gh release create", { allow: ["Run(*)"] }, "gh release create v1", "ask", "gh release create"],
  ["gh pr create", { allow: ["Run(*)"] }, "gh pr create --fill", "ask", "gh pr create"],
  ["docker push", { allow: ["Run(*)"] }, "docker push img:1", "ask", "docker push"],
  ["a deny still denies it", { deny: ["Run(git push*)"] }, "git push", "deny"],
  ["git push --help is still a push to the rules", {}, "sh -c 'git push --dry-run'", "ask", "git push"],
];

describe("Run rules from the parsed command line", () => {
  test("the table is long enough to mean something", () => {
    expect(rows.length).toBeGreaterThanOrEqual(80);
  });
  for (const [what, rules, command, expected, irreversible] of rows) {
    test(`${what}: ${command}`, () => {
      const got = judge(rules, command);
      expect(got.decision).toBe(expected);
      expect(got.irreversible).toBe(irreversible);
      expect(got.reason.length).toBeGreaterThan(20);
    });
  }
});

describe("the parse as data", () => {
  test("words are static where they can be, null where they expand at run time", () => {
    const s = parseShell(`FOO=1 "a b" c$X 'd' > out 2>&1 | wc -l`);
    expect(s.commands.map((c) => c.words)).toEqual([
      ["a b", null, "d"],
      ["wc", "-l"],
    ]);
    expect(s.commands[0]!.env).toEqual([{ name: "FOO", value: "1" }]);
    expect(s.malformed).toBe(false);
  });

  test("wrappers and global options come off; every form is kept for the deny rules", () => {
    const a = analyzeCommand("sudo -u me timeout 5 /usr/bin/git -C . push origin");
    expect(a.parts).toHaveLength(1);
    expect(a.parts[0]!.words).toEqual(["git", "push", "origin"]);
    expect(a.parts[0]!.privileged).toBe(true);
    expect(a.parts[0]!.forms).toEqual([
      "sudo -u me timeout 5 /usr/bin/git -C . push origin",
      "timeout 5 /usr/bin/git -C . push origin",
      "/usr/bin/git -C . push origin",
      "git -C . push origin",
      "git push origin",
    ]);
  });
});

describe("the fast way for plain lines parses exactly as tree-sitter does", () => {
  const shape = (p: ParsedScript) => ({
    commands: p.commands.map((c) => ({ words: c.words, env: c.env })),
    assigns: p.assigns,
    malformed: p.malformed,
  });
  const plain = [
    "bun test test/x.test.ts",
    "git -C . log --oneline -5 && git status",
    "ls -la | grep -v x | head -20",
    "FOO=1 BAR=two make build; echo done &",
    `"FOO"=1 make`,
    `FOO="a b" make 'x y' "p"q'r'`,
    "X=1",
    "a || b && c ; d",
    "echo a=b *.ts ?x",
    `echo ""`,
  ];
  const notPlain = [
    "echo $X",
    "ls > out",
    "cat <<EOF",
    "echo `x`",
    "if true; then x; fi",
    "(ls)",
    "ls |",
    "| ls",
    "ls ;; x",
    "time ls",
    "echo 'open",
    "echo ~/x",
    "a\\ b",
  ];
  test("plain lines take the fast way", () => {
    for (const line of plain) expect(quickParse(line)).not.toBeNull();
  });
  test("anything else goes to tree-sitter", () => {
    for (const line of notPlain) expect(quickParse(line)).toBeNull();
  });
  test("where the fast way answers, its answer is tree-sitter's", () => {
    for (const line of [...plain, ...notPlain, ...rows.map((r) => r[2])]) {
      const quick = quickParse(line);
      if (quick !== null) expect({ line, ...shape(quick) }).toEqual({ line, ...shape(parseShellTree(line)) });
    }
  });
});
