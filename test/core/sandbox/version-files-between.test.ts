import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { compilePolicy, decide } from "../../../core/policy/policy.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { createRunCommandTool } from "../../../tools/run-command.ts";
import { realTempDir as tempDir, writeTree } from "../../support/temp.ts";
import { toolContext } from "../../support/tool-context.ts";

// A version file in a directory between home and the workspace (~/code/.python-version for ~/code/proj) picks the
// version there as it does in the owner's shell: shown read-only, and nothing else of that directory.

/** A shim that finds its version as pyenv and nodenv do: the first `file` from the working directory up, else the root's global `version`. */
function shim(root: string, file: string, tool: string): string {
  return [
    "#!/usr/bin/env bash",
    `root="${root}"`,
    'v=$(cat "$root/version"); d=$PWD',
    `while :; do if [ -f "$d/${file}" ]; then v=$(head -n1 "$d/${file}"); break; fi; [ "$d" = / ] && break; d=$(dirname "$d"); done`,
    `if [ -x "$root/versions/$v/bin/${tool}" ]; then exec "$root/versions/$v/bin/${tool}" "$@"; fi`,
    `echo "no ${tool} $v" >&2; exit 1`,
    "",
  ].join("\n");
}

function standIn() {
  const home = tempDir("pencil-vf-home-");
  const pyenv = join(home, ".pyenv");
  const nodenv = join(home, ".nodenv");
  writeTree(home, {
    ".pyenv/version": "3.98.0\n",
    ".pyenv/shims/python": shim(pyenv, ".python-version", "python"),
    ".pyenv/versions/3.98.0/bin/python": '#!/bin/sh\necho "Python 3.98.0 (global)"\n',
    ".pyenv/versions/3.99.1/bin/python": '#!/bin/sh\necho "Python 3.99.1 (code)"\n',
    ".nodenv/version": "20.0.0\n",
    ".nodenv/shims/node": shim(nodenv, ".node-version", "node"),
    ".nodenv/versions/20.0.0/bin/node": '#!/bin/sh\necho "v20.0.0-global"\n',
    ".nodenv/versions/22.99.0/bin/node": '#!/bin/sh\necho "v22.99.0-home"\n',
    // In the owner's home itself, and in the directory between it and the workspace.
    ".node-version": "22.99.0\n",
    "code/.python-version": "3.99.1\n",
    "code/.tool-versions": "python 3.99.1\n",
    "code/notes.txt": "private notes beside the version file\n",
    "code/other-project/.env": "OTHER=secret\n",
    "code/proj/README.md": "hi\n",
  });
  for (const f of [
    ".pyenv/shims/python",
    ".pyenv/versions/3.98.0/bin/python",
    ".pyenv/versions/3.99.1/bin/python",
    ".nodenv/shims/node",
    ".nodenv/versions/20.0.0/bin/node",
    ".nodenv/versions/22.99.0/bin/node",
  ])
    chmodSync(join(home, f), 0o755);
  mkdirSync(join(home, "code/proj/sub"));
  return {
    home,
    ws: join(home, "code/proj"),
    env: {
      PATH: `${join(pyenv, "shims")}:${join(nodenv, "shims")}:/usr/local/bin:/usr/bin:/bin`,
      HOME: home,
      LANG: "C.UTF-8",
    },
  };
}

describe("version files between home and the workspace", () => {
  test.skipIf(!sandboxAvailable())(
    "~/code/.python-version and ~/.node-version pick the versions they pick outside; they are read-only, their neighbours stay covered",
    async () => {
      const { home, ws, env } = standIn();
      const command = "python; node";
      const outside = spawnSync("bash", ["-c", command], { cwd: ws, env, encoding: "utf8" });
      expect(outside.stdout).toBe("Python 3.99.1 (code)\nv22.99.0-home\n");
      const t = toolContext(ws, { home });
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
            command,
            "(cd sub && python)",
            `cat ${join(home, "code/.tool-versions")}`,
            `ls -A ${join(home, "code")}`,
            `cat ${join(home, "code/notes.txt")} 2>/dev/null || echo notes-hidden`,
            `(echo 3.98.0 > ${join(home, "code/.python-version")}) 2>/dev/null || echo read-only`,
          ].join("; "),
        });
        expect(out).toContain("Exit code 0");
        expect(out).toContain(`Output:\n${outside.stdout}Python 3.99.1 (code)\npython 3.99.1\n`);
        // Only the version files (and the workspace's own mount point) are in the directory between.
        expect(out).toContain("\n.python-version\n.tool-versions\nproj\nnotes-hidden\nread-only\n");
        expect(out).not.toContain("private notes");
        expect(out).not.toContain("other-project");
        expect(out).toContain("No file changes.");
      } finally {
        await tool.close?.();
      }
    },
    60_000,
  );
});
