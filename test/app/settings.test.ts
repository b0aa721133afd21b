import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compilePolicy, decide, ruleText } from "../../core/policy/policy.ts";
import { loadSettings, type SettingsInput } from "../../app/settings.ts";
import { DEFAULT_LIMITS } from "../../core/tool-limits.ts";
import { loadShellParser } from "../../core/policy/shell-parse.ts";
import { ConfigError } from "../../core/errors/config-error.ts";

// Run(...) rules are judged on the parsed command line.
beforeAll(loadShellParser);

const tmpRoots: string[] = [];
afterAll(() => {
  for (const r of tmpRoots) rmSync(r, { recursive: true, force: true });
});

/** A fresh layout: <root>/home, <root>/home/.pencil (PENCIL_HOME), <root>/ws, <root>/shared-lib. */
function layout(files: { user?: unknown; ws?: unknown } = {}) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "pencil-settings-")));
  tmpRoots.push(root);
  const home = join(root, "home");
  const pencilHome = join(home, ".pencil");
  const ws = join(root, "ws");
  mkdirSync(pencilHome, { recursive: true });
  mkdirSync(join(ws, ".pencil"), { recursive: true });
  mkdirSync(join(root, "shared-lib"), { recursive: true });
  const userFile = join(pencilHome, "settings.json");
  const wsFile = join(ws, ".pencil", "settings.json");
  const put = (file: string, content: unknown) =>
    writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  if (files.user !== undefined) put(userFile, files.user);
  if (files.ws !== undefined) put(wsFile, files.ws);
  const input = (extra: Partial<SettingsInput> = {}): SettingsInput => ({
    workspaceRoot: ws,
    pencilHome,
    home,
    cliAllow: [],
    cliDeny: [],
    ...extra,
  });
  return { root, home, pencilHome, ws, userFile, wsFile, input };
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadSettings", () => {
  test("no files: only CLI rules, default limits, nothing read", () => {
    const l = layout();
    const s = loadSettings(l.input({ cliDeny: ["Edit(dist/**)"] }));
    expect(s.files).toEqual([]);
    expect(s.warnings).toEqual([]);
    expect(s.limits).toEqual(DEFAULT_LIMITS);
    expect(s.rules).toEqual([{ kind: "Edit", pattern: "dist/**", effect: "deny", source: "--deny" }]);
  });

  test("merges the user file, the workspace file and the CLI flags", () => {
    const l = layout({
      user: { permissions: { deny: ["Edit(vendor/**)"], allow: ["Read(../shared-lib/**)", "Run(bun test*)"] } },
      ws: { permissions: { deny: ["Edit(src/generated/**)"], ask: ["Edit(package.json)"] } },
    });
    const s = loadSettings(l.input({ cliAllow: ["Run(git status*)"], cliDeny: ["Read(docs/private/**)"] }));
    expect(s.files).toEqual([l.userFile, l.wsFile]);
    expect(s.warnings).toEqual([]);
    const seen = s.rules.map((r) => `${r.effect} ${ruleText(r)} ${r.source}`).sort();
    expect(seen).toEqual(
      [
        `deny Edit(vendor/**) ${l.userFile}`,
        `allow Read(../shared-lib/**) ${l.userFile}`,
        `allow Run(bun test*) ${l.userFile}`,
        `deny Edit(src/generated/**) ${l.wsFile}`,
        `ask Edit(package.json) ${l.wsFile}`,
        "allow Run(git status*) --allow",
        "deny Read(docs/private/**) --deny",
      ].sort(),
    );
    const policy = compilePolicy({ workspaceRoot: l.ws, home: l.home, pencilHome: l.pencilHome, rules: s.rules });
    const d = (access: "read" | "write", p: string) => decide(policy, { tool: "t", access, real: p }).decision;
    expect(d("write", join(l.ws, "src/generated/a.ts"))).toBe("deny");
    expect(d("write", join(l.ws, "package.json"))).toBe("ask");
    expect(d("write", join(l.ws, "vendor/x.js"))).toBe("deny");
    expect(d("read", join(l.ws, "docs/private/a.md"))).toBe("deny");
    expect(d("read", join(l.root, "shared-lib/a.ts"))).toBe("allow");
    expect(decide(policy, { tool: "run_command", access: "run", command: "git status -s" }).decision).toBe("allow");
    expect(decide(policy, { tool: "run_command", access: "run", command: "bun test x" }).decision).toBe("allow");
  });

  test("malformed JSON names the file", () => {
    const l = layout({ ws: '{ "permissions": { "deny": [ "Edit(x)", ] } }' });
    const e = configError(() => loadSettings(l.input()));
    expect(e.file).toBe(l.wsFile);
    expect(e.message).toContain(l.wsFile);
    expect(e.message).toContain("not valid JSON");
  });

  test("a wrong type names the file and the key", () => {
    const l = layout({ user: { permissions: { allow: "Read(src/**)" } } });
    const e = configError(() => loadSettings(l.input()));
    expect(e.file).toBe(l.userFile);
    expect(e.message).toContain("permissions.allow");
    expect(e.message).toContain(l.userFile);
  });

  test("a non-object settings file is rejected", () => {
    const l = layout({ user: "[1, 2]" });
    expect(configError(() => loadSettings(l.input())).file).toBe(l.userFile);
  });

  test("a negative limit is rejected", () => {
    const l = layout({ user: { limits: { maxFileBytes: -1 } } });
    expect(configError(() => loadSettings(l.input())).message).toContain("limits.maxFileBytes");
  });

  test("a bad rule names the file and the rule", () => {
    const l = layout({ ws: { permissions: { deny: ["Edit(ok/**)", "Bash(rm -rf /)"] } } });
    const e = configError(() => loadSettings(l.input()));
    expect(e.file).toBe(l.wsFile);
    expect(e.rule).toBe("Bash(rm -rf /)");
    expect(e.message).toContain(l.wsFile);
    expect(e.message).toContain("Bash(rm -rf /)");
  });

  test("a bad CLI rule names the flag", () => {
    const l = layout();
    const e = configError(() => loadSettings(l.input({ cliAllow: ["Read("] })));
    expect(e.file).toBe("--allow");
    expect(e.rule).toBe("Read(");
  });

  test("a settings path that is a directory is an error", () => {
    const l = layout();
    mkdirSync(l.wsFile);
    expect(configError(() => loadSettings(l.input())).file).toBe(l.wsFile);
  });

  test("workspace allow rules reaching outside are ignored with a warning each", () => {
    const l = layout({
      ws: {
        permissions: {
          allow: [
            "Read(../shared-lib/**)",
            "Read(~/notes/**)",
            "Read(/etc/**)",
            "Read(escape/**)",
            "Edit(src/**)",
            "Read(docs/**)",
          ],
        },
      },
    });
    symlinkSync(join(l.root, "shared-lib"), join(l.ws, "escape"));
    const s = loadSettings(l.input());
    const kept = s.rules.map(ruleText);
    expect(kept).toEqual(["Edit(src/**)", "Read(docs/**)"]);
    expect(s.warnings).toHaveLength(4);
    for (const rule of ["Read(../shared-lib/**)", "Read(~/notes/**)", "Read(/etc/**)", "Read(escape/**)"]) {
      expect(s.warnings.some((w) => w.includes(rule) && w.includes("cannot allow access outside the workspace"))).toBe(
        true,
      );
    }
    const policy = compilePolicy({ workspaceRoot: l.ws, home: l.home, pencilHome: l.pencilHome, rules: s.rules });
    expect(decide(policy, { tool: "t", access: "read", real: join(l.root, "shared-lib/a.ts") }).decision).toBe("ask");
  });

  test("workspace Run allows are ignored; its deny and ask rules count", () => {
    const l = layout({
      ws: { permissions: { allow: ["Run(curl*)"], ask: ["Run(git push*)"], deny: ["Read(../shared-lib/**)"] } },
    });
    const s = loadSettings(l.input());
    expect(s.rules.map(ruleText).sort()).toEqual(["Read(../shared-lib/**)", "Run(git push*)"]);
    expect(s.warnings).toHaveLength(1);
    expect(s.warnings[0]).toContain("cannot allow commands");
    const policy = compilePolicy({ workspaceRoot: l.ws, home: l.home, pencilHome: l.pencilHome, rules: s.rules });
    expect(decide(policy, { tool: "t", access: "run", command: "curl evil.sh" }).decision).toBe("ask");
    expect(decide(policy, { tool: "t", access: "read", real: join(l.root, "shared-lib/a") }).decision).toBe("deny");
  });

  test("workspace Net allows are ignored; its Net denies count; the user's Net allows count", () => {
    const l = layout({
      ws: { permissions: { allow: ["Net(evil.example)"], deny: ["Net(*.tracker.example)"] } },
      user: { permissions: { allow: ["Net(registry.npmjs.org)"] } },
    });
    const s = loadSettings(l.input());
    expect(s.rules.map(ruleText).sort()).toEqual(["Net(*.tracker.example)", "Net(registry.npmjs.org)"]);
    expect(
      s.warnings.some(
        (w) => w.includes("Ignored Net(evil.example)") && w.includes("cannot let data leave the machine unasked"),
      ),
    ).toBe(true);
    const policy = compilePolicy({ workspaceRoot: l.ws, home: l.home, pencilHome: l.pencilHome, rules: s.rules });
    const net = (host: string) => decide(policy, { tool: "t", access: "net", host }).decision;
    expect([net("evil.example"), net("a.tracker.example"), net("registry.npmjs.org")]).toEqual([
      "ask",
      "deny",
      "allow",
    ]);
  });

  test("workspace mode switches are ignored with a warning each", () => {
    const l = layout({
      ws: {
        defaultMode: "bypassPermissions",
        dangerouslySkipPermissions: true,
        permissions: { defaultMode: "acceptEdits", deny: [] },
      },
    });
    const s = loadSettings(l.input());
    expect(s.rules).toEqual([]);
    expect(s.warnings).toHaveLength(3);
    for (const key of ["defaultMode", "dangerouslySkipPermissions", "permissions.defaultMode"]) {
      expect(s.warnings.some((w) => w.includes(`"${key}"`) && w.includes("cannot switch or loosen"))).toBe(true);
    }
  });

  test("an unknown top-level key is a warning, not an error", () => {
    const l = layout({ user: { $schema: "x", theme: "dark", permissions: {} } });
    const s = loadSettings(l.input());
    expect(s.warnings).toHaveLength(1);
    expect(s.warnings[0]).toContain('"theme"');
  });

  test("the user file can allow reads outside the workspace", () => {
    const l = layout({ user: { permissions: { allow: ["Read(../shared-lib/**)", "Read(~/notes/**)"] } } });
    const s = loadSettings(l.input());
    expect(s.warnings).toEqual([]);
    const policy = compilePolicy({ workspaceRoot: l.ws, home: l.home, pencilHome: l.pencilHome, rules: s.rules });
    expect(decide(policy, { tool: "t", access: "read", real: join(l.root, "shared-lib/a.ts") }).decision).toBe("allow");
    expect(decide(policy, { tool: "t", access: "read", real: join(l.home, "notes/n.md") }).decision).toBe("allow");
  });

  test("allows of built-in denied paths are dropped with a 'no effect' warning", () => {
    const l = layout({
      user: {
        permissions: {
          allow: ["Read(**/.env)", "Read(~/.ssh/**)", "Edit(../shared-lib/**)", "Edit(.git/**)", "Read(.env.example)"],
        },
      },
    });
    const s = loadSettings(l.input({ cliAllow: ["Run(make && make test)"] }));
    expect(s.rules.map(ruleText)).toEqual(["Read(.env.example)"]);
    expect(s.warnings).toHaveLength(5);
    for (const w of s.warnings) expect(w).toContain("has no effect");
  });

  test("limits: the user file raises, the workspace file may only lower", () => {
    const raised = layout({
      user: { limits: { maxFileBytes: 10_000_000 } },
      ws: { limits: { maxFileBytes: 20_000_000 } },
    });
    const a = loadSettings(raised.input());
    expect(a.limits.maxFileBytes).toBe(10_000_000);
    expect(a.warnings).toHaveLength(1);
    expect(a.warnings[0]).toContain("can only lower");

    const lowered = layout({ ws: { limits: { maxFileBytes: 1000, searchMaxMatches: 10 } } });
    const b = loadSettings(lowered.input());
    expect(b.limits).toEqual({ ...DEFAULT_LIMITS, maxFileBytes: 1000, searchMaxMatches: 10 });
    expect(b.warnings).toEqual([]);
  });

  test("sandbox.network: off by default, the user file may open it, the workspace file may not", () => {
    const network = (x: { sandbox: { network: boolean } }) => x.sandbox.network;
    expect(network(loadSettings(layout({}).input()))).toBe(false);
    expect(network(loadSettings(layout({ user: { sandbox: { network: true } } }).input()))).toBe(true);
    const hostile = loadSettings(layout({ ws: { sandbox: { network: true } } }).input());
    expect(network(hostile)).toBe(false);
    expect(hostile.warnings[0]).toContain("cannot open the network");
    const closed = loadSettings(
      layout({ user: { sandbox: { network: true } }, ws: { sandbox: { network: false } } }).input(),
    );
    expect(network(closed)).toBe(false);
  });

  test("sandbox.env: each file's entries apart; credentials, Pencil's keys and HOME are ignored with a warning; a bad name stops", () => {
    expect(loadSettings(layout({}).input()).sandbox.env).toEqual({ owner: {}, workspace: {} });
    const s = loadSettings(
      layout({
        user: { sandbox: { env: { FORCE_COLOR: "1", CI: null, GITHUB_TOKEN: "x", HOME: "/elsewhere" } } },
        ws: {
          sandbox: {
            env: {
              NODE_ENV: "test",
              LANG: null,
              DATABASE_URL: "postgres://me:hunter2hunter2@db.example.com/app",
              GROQ_DEFAULT_MODEL: "m",
            },
          },
        },
      }).input(),
    );
    expect(s.sandbox.env).toEqual({
      owner: { FORCE_COLOR: "1", CI: null },
      workspace: { NODE_ENV: "test", LANG: null },
    });
    expect(s.warnings.join("\n")).toContain("Ignored sandbox.env.GITHUB_TOKEN");
    expect(s.warnings.join("\n")).toContain("Ignored sandbox.env.HOME");
    expect(s.warnings.join("\n")).toContain("Ignored sandbox.env.DATABASE_URL");
    expect(s.warnings.join("\n")).toContain("Ignored sandbox.env.GROQ_DEFAULT_MODEL");
    expect(() => loadSettings(layout({ user: { sandbox: { env: { "BAD-NAME": "1" } } } }).input())).toThrow(
      /variable name "BAD-NAME"/,
    );
    expect(() => loadSettings(layout({ user: { sandbox: { env: { N: 1 } } } }).input())).toThrow(/sandbox\.env\.N/);
  });

  test("a workspace whose .pencil/settings.json is the user file is read once, as the user's", () => {
    const l = layout({ user: { permissions: { allow: ["Read(../shared-lib/**)"] } } });
    // The home directory used as workspace, with PENCIL_HOME = ~/.pencil: both paths name one file.
    const s = loadSettings({
      workspaceRoot: l.home,
      pencilHome: l.pencilHome,
      home: l.home,
      cliAllow: [],
      cliDeny: [],
    });
    expect(s.files).toEqual([l.userFile]);
    expect(s.rules.map(ruleText)).toEqual(["Read(../shared-lib/**)"]);
  });
});

describe("limits.commandSeconds and limits.commandSecondsMax", () => {
  test("default 120 and 600; whole positive seconds only, else the file is named", () => {
    const none = loadSettings(layout().input());
    expect([none.limits.commandSeconds, none.limits.commandSecondsMax]).toEqual([120, 600]);
    for (const bad of [0, -5, 1.5, "60"]) {
      const l = layout({ user: { limits: { commandSeconds: bad } } });
      const error = configError(() => loadSettings(l.input()));
      expect(error.message).toContain("limits.commandSeconds");
      expect(error.message).toContain(l.userFile);
    }
  });

  test("the user file raises them, a workspace file may only lower them, and the default never passes the cap", () => {
    const raised = loadSettings(layout({ user: { limits: { commandSeconds: 300, commandSecondsMax: 1800 } } }).input());
    expect([raised.limits.commandSeconds, raised.limits.commandSecondsMax]).toEqual([300, 1800]);
    const ws = loadSettings(layout({ ws: { limits: { commandSeconds: 900, commandSecondsMax: 60 } } }).input());
    expect(ws.limits.commandSecondsMax).toBe(60);
    // The workspace's 900 is ignored (only lowering), and the owner's default 120 is over the lowered cap: the cap wins.
    expect(ws.limits.commandSeconds).toBe(60);
    expect(ws.warnings.some((w) => w.includes("limits.commandSeconds = 900") && w.includes("can only lower"))).toBe(
      true,
    );
    expect(ws.warnings.some((w) => w.includes("is over limits.commandSecondsMax (60): commands get 60 s"))).toBe(true);
  });
});
