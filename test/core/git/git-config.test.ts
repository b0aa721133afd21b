import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { entryKey, formatGitConfig, parseGitConfig } from "../../../core/git/config-file.ts";
import { gitEnv } from "../../../core/git/run-git.ts";
import { sandboxRepositoryEntries, withoutCredentials } from "../../../core/git/sandbox-config.ts";
import { tempDir } from "../../support/temp.ts";

/** What git itself reads from a config file: `key=value` pairs in order (a bare key has no `=`). */
function gitReads(text: string): string[] | null {
  const file = join(tempDir("pencil-gitcfg-"), "config");
  writeFileSync(file, text);
  const run = spawnSync("git", ["config", "--file", file, "--list", "-z"], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_CONFIG_NOSYSTEM: "1" },
  });
  if (run.status !== 0) return null;
  return run.stdout
    .split("\0")
    .filter(Boolean)
    .map((e) => {
      const nl = e.indexOf("\n");
      return nl === -1 ? e : `${e.slice(0, nl)}=${e.slice(nl + 1)}`;
    });
}

function oursReads(text: string): string[] | null {
  try {
    return parseGitConfig(text).map((e) => (e.value === null ? entryKey(e) : `${entryKey(e)}=${e.value}`));
  } catch {
    return null;
  }
}

describe("parseGitConfig reads what git reads", () => {
  const cases: [string, string][] = [
    ["plain sections", "[core]\n\tbare = false\n\tfilemode = true\n"],
    ["subsection with quotes and escapes", '[remote "or\\"ig\\\\in"]\n\turl = https://example.com/x.git\n'],
    ["legacy dotted subsection is lowercased", "[Branch.Main]\n\tRemote = origin\n"],
    ["case of names", "[CORE]\n\tFileMode = true\n"],
    ["bare key is true", "[core]\n\tbare\n"],
    ["comments and trailing spaces", "# top\n[core] ; after\n\tpager = less -R   # comment\n\teditor = vim;x\n"],
    ["quoted value keeps spaces and comment chars", '[alias]\n\tx = "  a # b ; c  "\n'],
    ["escapes in values", '[a]\n\tb = "tab\\there" new\\nline \\\\ \\"q\\"\n'],
    ["continuation lines", "[a]\n\tb = one \\\n   two\n"],
    ["inner whitespace runs become spaces", "[a]\n\tb = x \t\t y\n"],
    ["CRLF", "[a]\r\n\tb = c\r\n"],
    ["empty value", '[a]\n\tb =\n\tc = ""\n'],
    ["two headers on one line", "[a] x = 1 [b] y = 2\n"],
    ["bad escape is refused", "[a]\n\tb = \\q\n"],
    ["unterminated quote is refused", '[a]\n\tb = "open\n'],
    ["a key before any section", "b = 1\n[c]\n\td = 2\n"],
    ["include as an entry", '[include]\n\tpath = ../.gitconfig\n[includeIf "gitdir:~/w/"]\n\tpath = x\n'],
  ];
  for (const [name, text] of cases) test(name, () => expect(oursReads(text)).toEqual(gitReads(text)));

  test("formatGitConfig writes back a file git reads to the same entries", () => {
    const text = '[remote "a \\"b\\""]\n\turl = "x\\ty" z\n[core]\n\tbare\n[a]\n\tb = " lead#;\\\\"\n';
    const entries = parseGitConfig(text);
    expect(gitReads(formatGitConfig(entries))).toEqual(gitReads(text));
  });
});

describe("the repository config a command sees", () => {
  const urls: [string, string][] = [
    ["https://user:SECRET@github.com/o/r.git", "https://github.com/o/r.git"],
    ["https://SECRET@github.com/o/r.git", "https://github.com/o/r.git"],
    ["http://x-access-token:SECRET@host:8080/r", "http://host:8080/r"],
    ["ssh://git:SECRET@host/r.git", "ssh://git@host/r.git"],
    ["ssh://git@host/r.git", "ssh://git@host/r.git"],
    ["git@github.com:o/r.git", "git@github.com:o/r.git"],
    ["/srv/repos/r.git", "/srv/repos/r.git"],
  ];
  for (const [url, shown] of urls) test(`a remote URL ${url}`, () => expect(withoutCredentials(url)).toBe(shown));

  test("keeps what git needs to read the repository; drops credentials, includes and every key that names a program", () => {
    const text = [
      "[core]",
      "\trepositoryformatversion = 1",
      "\tbare = false",
      "\tfsmonitor = ./watch.sh",
      "\thooksPath = .husky/_",
      "\tsshCommand = ssh -i ~/.ssh/deploy",
      "\tpager = less",
      "[extensions]",
      "\tobjectFormat = sha256",
      '[remote "origin"]',
      "\turl = https://me:SECRET-1@git.example/r.git",
      "\tfetch = +refs/heads/*:refs/remotes/origin/*",
      '[branch "main"]',
      "\tremote = origin",
      "\tmerge = refs/heads/main",
      "[http]",
      "\textraHeader = Authorization: Bearer SECRET-2",
      '[http "https://git.example/"]',
      "\textraHeader = SECRET-3",
      "[credential]",
      "\thelper = store",
      '[filter "lfs"]',
      "\tclean = git-lfs clean -- %f",
      '[diff "x"]',
      "\ttextconv = ./conv",
      "[include]",
      "\tpath = ~/.secrets.inc",
      "[alias]",
      "\tx = !sh -c id",
      '[submodule "lib"]',
      "\turl = https://SECRET-4@git.example/lib.git",
      "\tupdate = !./evil",
      "[user]",
      "\tname = Repo Person",
      "",
    ].join("\n");
    const kept = formatGitConfig(sandboxRepositoryEntries(parseGitConfig(text)));
    expect(kept).not.toContain("SECRET");
    expect(gitReads(kept)).toEqual([
      "core.repositoryformatversion=1",
      "core.bare=false",
      "extensions.objectformat=sha256",
      "remote.origin.url=https://git.example/r.git",
      "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*",
      "branch.main.remote=origin",
      "branch.main.merge=refs/heads/main",
      "submodule.lib.url=https://git.example/lib.git",
      "user.name=Repo Person",
    ]);
  });
});

describe("the environment of Pencil's own git", () => {
  test("the owner's identity and config location, no key, no variable that redirects git or names a program", () => {
    const env = gitEnv({
      PATH: "/usr/bin",
      HOME: "/home/o",
      GIT_AUTHOR_NAME: "Owner Person",
      GIT_COMMITTER_EMAIL: "o@example.com",
      GROQ_API_KEY: "gsk_x",
      TELEGRAM_BOT_TOKEN: "1:AA",
      AWS_SECRET_ACCESS_KEY: "s",
      GIT_DIR: "/elsewhere/.git",
      GIT_SSH_COMMAND: "ssh -i key",
      GIT_EXTERNAL_DIFF: "./diff.sh",
      GIT_CONFIG_PARAMETERS: "'core.fsmonitor=./x'",
      SSH_AUTH_SOCK: "/tmp/agent",
    });
    expect(env).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/o",
      GIT_AUTHOR_NAME: "Owner Person",
      GIT_COMMITTER_EMAIL: "o@example.com",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_ATTR_NOSYSTEM: "1",
      GIT_TERMINAL_PROMPT: "0",
      GIT_OPTIONAL_LOCKS: "0",
      GIT_PROTOCOL_FROM_USER: "0",
      GIT_PAGER: "cat",
      GIT_EDITOR: "false",
    });
  });
});
