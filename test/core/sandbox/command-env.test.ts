import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { copyFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { planCommandEnv } from "../../../core/sandbox/command-env.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { createRunCommandTool } from "../../../tools/run-command.ts";
import { checkCommandEnv } from "../../../modes/cli/commands/doctor.ts";
import { tempDir as sharedTempDir, writeTree } from "../../support/temp.ts";
import { ownerPath } from "../../support/hermetic-path.ts";
import { toolContext } from "../../support/tool-context.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix?: string): string {
  const dir = sharedTempDir(prefix);
  made.push(dir);
  return dir;
}
const scratch = { home: "/s/home", tmp: "/s/tmp" };

describe("planCommandEnv", () => {
  const owner = {
    PATH: "/usr/bin:/bin",
    HOME: "/home/me",
    TERM: "xterm-256color",
    COLORTERM: "truecolor",
    EDITOR: "vim",
    NODE_OPTIONS: "--max-old-space-size=4096",
    GROQ_API_KEY: "gsk_x",
    GROQ_DEFAULT_MODEL: "openai/gpt-oss-120b",
    PENCIL_HOME: "/home/me/.pencil",
    GITHUB_TOKEN: "ghp_x",
    DATABASE_URL: "postgres://app:hunter2hunter2@db.example.com:5432/app",
    OPAQUE: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    SSH_AUTH_SOCK: "/tmp/ssh-x/agent.1",
    HTTPS_PROXY: "http://proxy.corp:3128",
  };

  test("the owner's environment passes as it is, minus Pencil's keys, credentials (by name or value), sockets and the proxy", () => {
    const plan = planCommandEnv(owner, scratch);
    expect(plan.env).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/s/home",
      TMPDIR: "/s/tmp",
      TMP: "/s/tmp",
      TEMP: "/s/tmp",
      GIT_TERMINAL_PROMPT: "0",
      TERM: "xterm-256color",
      COLORTERM: "truecolor",
      EDITOR: "vim",
      NODE_OPTIONS: "--max-old-space-size=4096",
    });
    const why = Object.fromEntries(plan.dropped.map((d) => [d.name, d.why]));
    expect(why).toEqual({
      GROQ_API_KEY: "pencil",
      GROQ_DEFAULT_MODEL: "pencil",
      PENCIL_HOME: "pencil",
      GITHUB_TOKEN: "secret-name",
      DATABASE_URL: "secret-value",
      OPAQUE: "secret-value",
      SSH_AUTH_SOCK: "host-socket",
      HTTPS_PROXY: "proxy",
    });
  });

  test("nothing is forced: no CI, NO_COLOR or TERM the owner did not have", () => {
    const env = planCommandEnv({ PATH: "/bin" }, scratch).env;
    for (const name of ["CI", "NO_COLOR", "TERM", "FORCE_COLOR", "LANG", "PAGER"]) expect(env[name]).toBeUndefined();
    expect(planCommandEnv({ PATH: "/bin", CI: "true" }, scratch).env.CI).toBe("true");
  });

  test("sandbox.env: the owner's file sets and removes anything allowed; the workspace's removes, and adds only what is absent", () => {
    const plan = planCommandEnv(owner, scratch, {
      settings: {
        owner: { FORCE_COLOR: "1", EDITOR: null, NODE_OPTIONS: "--trace-warnings", HOME: "/x" },
        workspace: { APP_MODE: "dev", TERM: "dumb", COLORTERM: null, EDITOR: "nano", GITHUB_TOKEN: "ghp_back" },
      },
    });
    expect(plan.env.FORCE_COLOR).toBe("1");
    expect(plan.env.NODE_OPTIONS).toBe("--trace-warnings");
    expect(plan.env.HOME).toBe("/s/home");
    expect(plan.env.APP_MODE).toBe("dev");
    // The workspace cannot override the owner's TERM, re-add the EDITOR the owner removed, or bring a token back.
    expect(plan.env.TERM).toBe("xterm-256color");
    expect(plan.env.EDITOR).toBeUndefined();
    expect(plan.env.GITHUB_TOKEN).toBeUndefined();
    expect(plan.env.COLORTERM).toBeUndefined();
    const setBy = Object.fromEntries(plan.set.map((x) => [x.name, x.by]));
    expect(setBy.FORCE_COLOR).toBe("sandbox.env (your settings)");
    expect(setBy.APP_MODE).toBe("sandbox.env (the workspace's settings)");
    expect(setBy.HOME).toBe("Pencil");
    expect(plan.dropped).toContainEqual({ name: "EDITOR", why: "settings" });
  });

  test("layers (the proxy's, git's identity) come last and are named", () => {
    const plan = planCommandEnv(owner, scratch, { layers: [{ by: "git identity", vars: { GIT_AUTHOR_NAME: "Me" } }] });
    expect(plan.env.GIT_AUTHOR_NAME).toBe("Me");
    expect(plan.set).toContainEqual({ name: "GIT_AUTHOR_NAME", by: "git identity" });
  });

  test("doctor lists what a command gets and what it does not, by name, never a value", () => {
    const check = checkCommandEnv(owner, { owner: { FORCE_COLOR: "1" }, workspace: {} }, false);
    expect(check.detail).toContain("commands get your environment: COLORTERM, EDITOR, NODE_OPTIONS, PATH, TERM");
    expect(check.detail).toContain("set by sandbox.env (your settings): FORCE_COLOR");
    expect(check.detail).toContain("set by Pencil: GIT_TERMINAL_PROMPT, HOME, TEMP, TMP, TMPDIR");
    expect(check.detail).toContain("not passed, its value looks like a credential: DATABASE_URL, OPAQUE");
    expect(check.detail).toContain(
      "not passed, Pencil's own configuration: GROQ_API_KEY, GROQ_DEFAULT_MODEL, PENCIL_HOME",
    );
    expect(check.detail).toContain("refuses every request at once, since the network is off");
    for (const value of ["hunter2", "ghp_", "gsk_", "proxy.corp"]) expect(check.detail).not.toContain(value);
  });
});

// A small real JS project with its own node:test suite, whose results depend on the environment the way colour
// libraries decide (picocolors' own detection, vendored, and kleur's rules), run bare and through run_command.
const hasNamespace = sandboxAvailable();
const hasNpm = spawnSync("npm", ["--version"]).status === 0;

function colourProject(): string {
  const root = tempDir("pencil-colour-project-");
  writeTree(root, {
    "package.json": `${JSON.stringify({ name: "tint", version: "1.0.0", type: "module", scripts: { test: "node --test --test-reporter=spec test/" } }, null, 2)}\n`,
    "node_modules/picocolors/package.json": `${JSON.stringify({ name: "picocolors", version: "1.1.1", main: "picocolors.js" })}\n`,
    "src/tint.js": [
      'import pc from "picocolors";',
      "/** kleur's rule: colour unless NODE_DISABLE_COLORS or NO_COLOR is set or TERM is dumb, and only on a TTY or FORCE_COLOR. */",
      "export function kleurEnabled(env = process.env, isTTY = process.stdout.isTTY) {",
      '  if (env.NODE_DISABLE_COLORS || env.NO_COLOR != null || env.TERM === "dumb") return false;',
      '  return (env.FORCE_COLOR != null && env.FORCE_COLOR !== "0") || !!isTTY;',
      "}",
      "export const warn = (text) => pc.yellow(`warning: ${text}`);",
      "",
    ].join("\n"),
    "test/tint.test.js": [
      'import { test } from "node:test";',
      'import assert from "node:assert/strict";',
      'import pc from "picocolors";',
      'import { kleurEnabled, warn } from "../src/tint.js";',
      'test("colors enabled by default (picocolors)", () => {',
      "  assert.equal(pc.isColorSupported, true);",
      '  assert.equal(warn("x"), "\\u001b[33mwarning: x\\u001b[39m");',
      "});",
      'test("colors enabled by default (kleur)", () => assert.equal(kleurEnabled(), true));',
      'test("the owner\'s terminal type and settings", () => {',
      '  assert.equal(process.env.TERM, "xterm-256color");',
      '  assert.equal(process.env.APP_MODE, "owner");',
      "  assert.equal(process.env.CI, undefined);",
      "});",
      'test("prints in colour", () => console.log(warn("coloured output")));',
      "",
    ].join("\n"),
  });
  copyFileSync(
    join(import.meta.dir, "../../../node_modules/picocolors/picocolors.js"),
    join(root, "node_modules/picocolors/picocolors.js"),
  );
  return root;
}

/** node:test's timings and npm's log path are all that may differ between two runs. */
const normalise = (text: string) =>
  text
    .replace(/\(\d+(\.\d+)?ms\)/g, "(Nms)")
    .replace(/duration_ms \d+(\.\d+)?/g, "duration_ms N")
    .trimEnd();

describe("a colour-detecting test suite runs in Pencil as it does bare", () => {
  test.skipIf(!hasNamespace || !hasNpm)(
    "npm test: the same exit status and the same output (colour codes removed for the model), normalised for time",
    async () => {
      const root = colourProject();
      const home = tempDir("pencil-colour-home-");
      const ownerEnv = {
        // The owner's own PATH: the project runs with the toolchains the owner really has.
        PATH: `${dirname(process.execPath)}:${ownerPath()}`,
        HOME: home,
        LANG: "C.UTF-8",
        TERM: "xterm-256color",
        FORCE_COLOR: "1",
        APP_MODE: "owner",
        npm_config_update_notifier: "false",
        npm_config_fund: "false",
      };
      const bare = spawnSync("bash", ["-c", "npm test 2>&1"], {
        cwd: root,
        env: ownerEnv,
        stdio: ["ignore", "pipe", "pipe"],
        encoding: "utf8",
      });
      expect(bare.status).toBe(0);
      // The suite really saw colour: the bare output carries the escape codes.
      expect(bare.stdout).toContain("\u001b[33mwarning: coloured output\u001b[39m");
      const t = toolContext(root);
      const tool = createRunCommandTool({ sandbox: "namespace", scratchParent: tempDir(), parentEnv: ownerEnv });
      try {
        const out = await t.run(tool, { command: "npm test" });
        expect(out).toContain("Exit code 0 after");
        const printed = out.slice(out.indexOf("Output:\n") + "Output:\n".length, out.lastIndexOf("\nNo file changes."));
        expect(printed).not.toContain("\u001b[");
        expect(normalise(printed)).toBe(normalise(stripVTControlCharacters(bare.stdout)));
        expect(printed).toContain("warning: coloured output");
      } finally {
        await tool.close?.();
      }
    },
    30_000,
  );
});
