import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../core/errors/config-error.ts";
import { loadSettings } from "../../app/settings.ts";
import { loadShellParser } from "../../core/policy/shell-parse.ts";
import { DEFAULT_LIMITS } from "../../core/tool-limits.ts";

// A misspelled setting or rule gets a guess and the whole list of what is valid.
beforeAll(loadShellParser);

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function load(user: unknown) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "pencil-guess-")));
  roots.push(root);
  const pencilHome = join(root, "home", ".pencil");
  const ws = join(root, "ws");
  mkdirSync(pencilHome, { recursive: true });
  mkdirSync(ws);
  writeFileSync(join(pencilHome, "settings.json"), JSON.stringify(user));
  return loadSettings({ workspaceRoot: ws, pencilHome, home: join(root, "home"), cliAllow: [], cliDeny: [] });
}

describe("unknown settings", () => {
  test.each([
    [{ permisions: { deny: [] } }, "permisions", "permissions"],
    [{ permissions: { alow: [] } }, "permissions.alow", "permissions.allow"],
    [{ limits: { maxFileByte: 10 } }, "limits.maxFileByte", "limits.maxFileBytes"],
    [{ sandbox: { netwrk: true } }, "sandbox.netwrk", "sandbox.network"],
  ])("%p gets a did-you-mean", (settings, at, guess) => {
    const warning = load(settings).warnings.find((w) => w.includes(`"${at}"`));
    expect(warning).toBeDefined();
    expect(warning).toContain(`did you mean "${guess}"`);
  });

  test("the warning lists every valid key", () => {
    const warning = load({ colour: true }).warnings.join("\n");
    for (const key of [
      "permissions.deny",
      "permissions.ask",
      "permissions.allow",
      "sandbox.network",
      "mcpServers",
      "git.commitButton",
      "telegram.workspaces",
      ...Object.keys(DEFAULT_LIMITS).map((k) => `limits.${k}`),
    ])
      expect(warning).toContain(key);
    expect(warning).not.toContain("did you mean");
  });
});

describe("bad rules", () => {
  function ruleError(rule: string): string {
    try {
      load({ permissions: { deny: [rule] } });
    } catch (error) {
      if (ConfigError.isInstance(error)) return error.message;
      throw error;
    }
    throw new Error(`expected ${rule} to be refused`);
  }

  test("the error names every rule kind", () => {
    const message = ruleError("Write src/**");
    for (const kind of ["Read(", "Edit(", "Run(", "Net(", "Mcp("]) expect(message).toContain(kind);
  });

  test.each([
    ["Reed(src/**)", "Read"],
    ["Nett(example.com)", "Net"],
  ])("%s: did you mean %s", (rule, kind) => {
    expect(ruleError(rule)).toContain(`did you mean ${kind}`);
  });
});
