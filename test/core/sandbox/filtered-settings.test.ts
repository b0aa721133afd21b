// Settings files outside the workspace and home (/etc/pip.conf, npm's global npmrc, a pip.conf in a toolchain root):
// a command sees each as the owner's programs do, minus its credentials, never an empty mask and never the token.
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { compilePolicy, decide } from "../../../core/policy/policy.ts";
import { planHiding } from "../../../core/sandbox/hiding.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { withoutCredentials } from "../../../core/sandbox/package-config.ts";
import { GLOBAL_NPMRC, isFilteredSettingsPath } from "../../../core/policy/settings-names.ts";
import { createRunCommandTool } from "../../../tools/run-command.ts";
import { realTempDir as tempDir, writeTree } from "../../support/temp.ts";
import { toolContext } from "../../support/tool-context.ts";

const hasNamespace = sandboxAvailable();

function workspace() {
  const root = tempDir("pencil-fs-ws-");
  writeTree(root, { "README.md": "hi\n" });
  const t = toolContext(root);
  const policy = compilePolicy({ workspaceRoot: t.ws.root, home: t.ws.home, pencilHome: tempDir(), rules: [] });
  t.ctx.visible = (real) => decide(policy, { tool: "run_command", access: "read", real }).decision === "allow";
  return t;
}

async function inPencil(command: string, env: Record<string, string>) {
  const t = workspace();
  const tool = createRunCommandTool({
    sandbox: "namespace",
    scratchParent: tempDir(),
    parentEnv: env,
    realHome: env.HOME,
  });
  try {
    return await t.run(tool, { command });
  } finally {
    await tool.close?.();
  }
}

const SECRET_PIP = [
  "[global]",
  "index-url = https://me:s3cret-pass@pypi.example/simple",
  "cert = /etc/ssl/certs/ca-certificates.crt",
  "password = hunter2-pip",
  "",
].join("\n");

describe("settings files outside the workspace, shown without their credentials", () => {
  test("which paths count: the settings names anywhere, npm's global npmrc by path only", () => {
    const table: [string, boolean][] = [
      ["/etc/pip.conf", true],
      ["/etc/xdg/pip/pip.conf", true],
      ["/root/.pyenv/versions/3.12.0/pip.conf", true],
      ["/opt/node/.npmrc", true],
      ["/etc/npmrc", true],
      ["/usr/etc/npmrc", true],
      ["/usr/local/etc/npmrc", true],
      ["/opt/etc/npmrc", false],
      ["/etc/npmrc.d", false],
      ["/etc/pip.conf.bak", false],
      ["/etc/hostname", false],
    ];
    for (const [path, want] of table) expect([path, isFilteredSettingsPath(path)]).toEqual([path, want]);
  });

  test.skipIf(!hasNamespace)(
    "a pip.conf in a toolchain root on PATH: its index and cert reach the command, its password and URL user do not, and it cannot be written",
    async () => {
      const home = tempDir("pencil-fs-home-");
      const root = join(home, ".pyenv");
      writeTree(home, {
        ".pyenv/shims/python": '#!/bin/sh\nexec python3 "$@"\n',
        ".pyenv/versions/3.99.1/pip.conf": SECRET_PIP,
      });
      chmodSync(join(root, "shims/python"), 0o755);
      const conf = join(root, "versions/3.99.1/pip.conf");
      const env = { PATH: `${join(root, "shims")}:/usr/bin:/bin`, HOME: home, LANG: "C.UTF-8" };
      const out = await inPencil(`cat ${conf}; echo 'x' >> ${conf} && echo WROTE; true`, env);
      expect(out).toContain("Exit code 0");
      expect(out).toContain("index-url = https://pypi.example/simple");
      expect(out).toContain("cert = /etc/ssl/certs/ca-certificates.crt");
      expect(out).not.toContain("s3cret-pass");
      expect(out).not.toContain("hunter2-pip");
      expect(out).not.toMatch(/^WROTE$/m);
      expect(readFileSync(conf, "utf8")).toBe(SECRET_PIP);
    },
    60_000,
  );

  const systemFiles = ["/etc/pip.conf", "/etc/xdg/pip/pip.conf", ...GLOBAL_NPMRC].filter((p) => existsSync(p));
  test.skipIf(!hasNamespace || systemFiles.length === 0)(
    "this machine's system-wide settings (/etc/pip.conf, npm's global npmrc…) read inside as their filtered selves, not as empty masks",
    async () => {
      const home = tempDir("pencil-fs-home-");
      const out = await inPencil(systemFiles.map((f) => `echo "== ${f}"; cat ${f}`).join("; "), {
        PATH: "/usr/bin:/bin",
        HOME: home,
      });
      expect(out).toContain("Exit code 0");
      for (const f of systemFiles) {
        const shown = withoutCredentials(readFileSync(f, "utf8"));
        expect(shown.trim()).not.toBe("");
        expect(out).toContain(`== ${f}\n${shown.trimEnd()}`);
      }
      // And what pip itself makes of them is what it makes bare.
      if (existsSync("/usr/bin/pip3")) {
        const bare = spawnSync("pip3", ["config", "list", "--global"], {
          encoding: "utf8",
          env: { PATH: "/usr/bin:/bin", HOME: home },
        });
        const inside = await inPencil("pip3 config list --global", { PATH: "/usr/bin:/bin", HOME: home });
        expect(inside).toContain(bare.stdout.trimEnd());
      }
    },
    60_000,
  );

  test("planHiding masks them as secrets and lists them for their filtered copies; home's own are left to the command's HOME", () => {
    const home = tempDir("pencil-fs-home-");
    writeTree(home, {
      ".npmrc": "//r/:_authToken=x\n",
      ".pyenv/shims/python": "#!/bin/sh\n",
      ".pyenv/pip.conf": SECRET_PIP,
    });
    const ws = tempDir("pencil-fs-ws-");
    const h = planHiding({
      realHome: home,
      pencilHome: tempDir(),
      wsRoot: ws,
      scratchRoot: tempDir(),
      path: `${join(home, ".pyenv/shims")}:/usr/bin:/bin`,
      env: { HOME: home },
      scanCache: null,
    });
    expect(h.settings).toContain(join(home, ".pyenv/pip.conf"));
    expect(h.secrets).toContain(join(home, ".pyenv/pip.conf"));
    expect(h.settings).not.toContain(join(home, ".npmrc"));
    for (const f of ["/etc/pip.conf", ...GLOBAL_NPMRC].filter((p) => existsSync(p))) {
      expect(h.secrets).toContain(f);
      expect(h.settings).toContain(f);
    }
  });
});
