import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync } from "node:fs";
import { join } from "node:path";
import { planCommandEnv } from "../../../core/sandbox/command-env.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { compilePolicy, decide } from "../../../core/policy/policy.ts";
import { createRunCommandTool } from "../../../tools/run-command.ts";
import { realTempDir as tempDir, writeTree } from "../../support/temp.ts";
import { toolContext } from "../../support/tool-context.ts";

// XDG_CONFIG_HOME (and the other XDG base directories) set inside the owner's home: a command finds the owner's tool
// settings there as it does in ~/.config (filtered, in its own HOME), the version managers kept there, and none of
// the credentials the home's usual places would hold.

const PIP_PASSWORD = "xdg-pip-pa55word-0123456789";
const PNPM_TOKEN = "xdg-pnpm-t0ken-0123456789abc";
const UV_SECRET = "xdg-uv-credential-0123456789";
const GH_TOKEN = "gho_0123456789abcdefghijklmnopqrstuvwxyz";
const hasPip = existsSync("/usr/bin/python3") && spawnSync("/usr/bin/python3", ["-m", "pip", "--version"]).status === 0;

describe("XDG directories inside home", () => {
  test("planCommandEnv moves each one inside home below the command's HOME; one outside home, or relative, stays", () => {
    const plan = planCommandEnv(
      {
        PATH: "/usr/bin",
        HOME: "/home/me",
        XDG_CONFIG_HOME: "/home/me/.xdg/config",
        XDG_DATA_HOME: "/home/me",
        XDG_CACHE_HOME: "/var/cache/me",
        XDG_STATE_HOME: "state",
      },
      { home: "/s/home", tmp: "/s/tmp" },
      { realHome: "/home/me" },
    );
    expect(plan.env.XDG_CONFIG_HOME).toBe("/s/home/.xdg/config");
    expect(plan.env.XDG_DATA_HOME).toBe("/s/home");
    expect(plan.env.XDG_CACHE_HOME).toBe("/var/cache/me");
    expect(plan.env.XDG_STATE_HOME).toBe("state");
    expect(plan.set).toContainEqual({ name: "XDG_CONFIG_HOME", by: "Pencil (your XDG directory, moved with HOME)" });
  });

  test.skipIf(!sandboxAvailable())(
    "pip and pnpm settings in XDG_CONFIG_HOME apply filtered; a manager in XDG_DATA_HOME resolves; credentials there stay masked",
    async () => {
      const home = tempDir("pencil-xdg-home-");
      const config = join(home, ".xdg/config");
      const data = join(home, ".xdg/data");
      writeTree(home, {
        ".xdg/config/pip/pip.conf": `[global]\nindex-url = https://me:${PIP_PASSWORD}@pypi.acme.example/simple\ntimeout = 77\n`,
        ".xdg/config/pnpm/rc": `registry=http://127.0.0.1:4873/\n//127.0.0.1:4873/:_authToken=${PNPM_TOKEN}\n`,
        ".xdg/config/gh/hosts.yml": `github.com:\n    oauth_token: ${GH_TOKEN}\n`,
        // A mise-like manager whose data lives in XDG_DATA_HOME, and uv's credentials beside its kept tools.
        ".xdg/data/mise/shims/node": [
          "#!/usr/bin/env bash",
          'd="${MISE_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mise}"',
          'exec "$d/installs/node/21.99.0/bin/node" "$@"',
          "",
        ].join("\n"),
        ".xdg/data/mise/installs/node/21.99.0/bin/node": '#!/bin/sh\necho "v21.99.0-xdg"\n',
        ".xdg/data/uv/python/bin/uvpy": '#!/bin/sh\necho "uv python"\n',
        ".xdg/data/uv/credentials/credentials.toml": `[[credential]]\npassword = "${UV_SECRET}"\n`,
      });
      for (const f of [
        ".xdg/data/mise/shims/node",
        ".xdg/data/mise/installs/node/21.99.0/bin/node",
        ".xdg/data/uv/python/bin/uvpy",
      ])
        chmodSync(join(home, f), 0o755);
      const env = {
        PATH: `${join(data, "mise/shims")}:${join(data, "uv/python/bin")}:/usr/local/bin:/usr/bin:/bin`,
        HOME: home,
        LANG: "C.UTF-8",
        XDG_CONFIG_HOME: config,
        XDG_DATA_HOME: data,
      };
      const outside = spawnSync("bash", ["-c", "node; uvpy"], { env, encoding: "utf8" });
      expect(outside.stdout).toBe("v21.99.0-xdg\nuv python\n");
      const root = tempDir("pencil-xdg-ws-");
      writeTree(root, { "README.md": "hi\n" });
      const t = toolContext(root, { home });
      const policy = compilePolicy({ workspaceRoot: t.ws.root, home, pencilHome: tempDir(), rules: [] });
      t.ctx.visible = (real) => decide(policy, { tool: "run_command", access: "read", real }).decision === "allow";
      const tool = createRunCommandTool({
        sandbox: "namespace",
        scratchParent: tempDir(),
        realHome: home,
        parentEnv: env,
      });
      try {
        const out = await t.run(tool, {
          command: [
            'case "$XDG_CONFIG_HOME" in "$HOME"/.xdg/config) echo config-moved;; esac',
            "node",
            "uvpy",
            `cat "$XDG_CONFIG_HOME/pnpm/rc"`,
            hasPip ? "/usr/bin/python3 -m pip config list" : "echo no-pip",
            `cat ${join(data, "uv/credentials/credentials.toml")} ${join(config, "gh/hosts.yml")} "$XDG_CONFIG_HOME/gh/hosts.yml" 2>/dev/null`,
            "true",
          ].join("; "),
        });
        expect(out).toContain("Exit code 0");
        expect(out).toContain("config-moved\nv21.99.0-xdg\nuv python\nregistry=http://127.0.0.1:4873/\n");
        if (hasPip) {
          expect(out).toContain("global.index-url='https://pypi.acme.example/simple'");
          expect(out).toContain("global.timeout='77'");
        }
        for (const secret of [PIP_PASSWORD, PNPM_TOKEN, UV_SECRET, GH_TOKEN]) expect(out).not.toContain(secret);
        expect(out).not.toContain("_authToken");
      } finally {
        await tool.close?.();
      }
    },
    60_000,
  );
});
