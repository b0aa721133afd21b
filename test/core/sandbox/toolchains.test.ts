import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { compilePolicy, decide } from "../../../core/policy/policy.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { createRunCommandTool, type RunCommandOptions } from "../../../tools/run-command.ts";
import { realTempDir as tempDir, writeTree } from "../../support/temp.ts";
import { ownerPath } from "../../support/hermetic-path.ts";
import { toolContext } from "../../support/tool-context.ts";

const hasNamespace = sandboxAvailable();
const SYSTEM_PYTHON = "/usr/bin/python3";
/** Prints the pip wheel that `python3 -m venv` installs (ensurepip's bundled one, or Debian's copy of it), and the venv's site-packages. */
const FIND_PIP = [
  "import ensurepip, glob, os, sysconfig",
  "here = os.path.dirname(ensurepip.__file__)",
  "print(sorted(glob.glob(here + '/_bundled/pip-*.whl') + glob.glob('/usr/share/python-wheels/pip-*.whl'))[-1])",
  "print(sysconfig.get_path('purelib'))",
].join("\n");
const hasVenv = existsSync(SYSTEM_PYTHON) && spawnSync(SYSTEM_PYTHON, ["-c", `import venv\n${FIND_PIP}`]).status === 0;

/**
 * A default (symlinked) virtualenv at `root/.venv` with pip in it, made outside the sandbox as the owner would have it:
 * `python3 -m venv` lays it out, and pip goes in where `python3 -m venv` would put it (the wheel it bundles, unpacked into
 * the venv's site-packages, with pip's own console script), without running pip to install itself and setuptools and
 * compile them, which cost 5 to 7 of the file's 8 CPU-seconds and which no assertion here is about.
 */
function makeVenv(root: string, env: Record<string, string>): void {
  expect(bare(root, `${SYSTEM_PYTHON} -m venv --without-pip .venv`, env).status).toBe(0);
  const python = join(root, ".venv/bin/python3");
  const [wheel = "", site = ""] = spawnSync(python, ["-c", FIND_PIP], { env, encoding: "utf8" }).stdout.split("\n");
  expect(site).toStartWith(join(root, ".venv/"));
  const unpack = "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])";
  expect(spawnSync(python, ["-c", unpack, wheel, site], { env }).status).toBe(0);
  for (const name of ["pip", "pip3"]) {
    // pip's console script, as pip writes it.
    writeFileSync(
      join(root, ".venv/bin", name),
      `#!${python}\nimport re\nimport sys\nfrom pip._internal.cli.main import main\nif __name__ == '__main__':\n    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n    sys.exit(main())\n`,
      { mode: 0o755 },
    );
  }
  // The owner has run pip before: its first run outside compiles what it imports (1.0 CPU-s, where compiling all of
  // pip ahead costs 1.6), so the run inside finds the bytecode there and writes none.
  expect(bare(root, ".venv/bin/pip --version", env).stdout).toContain(join(root, ".venv"));
}

/** A workspace whose command visibility is the policy's (nothing outside the workspace), as in a session. */
function workspace(files: Record<string, string> = {}) {
  const root = tempDir("pencil-tc-ws-");
  writeTree(root, { "README.md": "hi\n", ...files });
  const t = toolContext(root);
  const policy = compilePolicy({ workspaceRoot: t.ws.root, home: t.ws.home, pencilHome: tempDir(), rules: [] });
  t.ctx.visible = (real) => decide(policy, { tool: "run_command", access: "read", real }).decision === "allow";
  return { root: t.ws.root, ...t };
}

async function inPencil(t: ReturnType<typeof workspace>, command: string, options: RunCommandOptions) {
  const tool = createRunCommandTool({ sandbox: "namespace", scratchParent: tempDir(), ...options });
  try {
    return await t.run(tool, { command });
  } finally {
    await tool.close?.();
  }
}

const bare = (cwd: string, command: string, env: Record<string, string>) =>
  spawnSync("bash", ["-c", command], { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

describe("links into what the sandbox shows read-only stay links", () => {
  test.skipIf(!hasNamespace || !hasVenv)(
    "a default (symlinked) virtualenv runs python -c and pip --version inside a command",
    async () => {
      const t = workspace();
      const env = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: tempDir(), LANG: "C.UTF-8" };
      makeVenv(t.root, env);
      expect(lstatSync(join(t.root, ".venv/bin/python")).isSymbolicLink()).toBe(true);
      const out = await inPencil(t, ".venv/bin/python -c 'print(6 * 7)' && .venv/bin/pip --version", {
        parentEnv: env,
        realHome: env.HOME,
      });
      expect(out).toContain("Exit code 0");
      expect(out).toContain("\n42\n");
      expect(out).toMatch(/pip \d+\.\d+.* from .*\.venv/);
      expect(out).toContain("No file changes.");
    },
    60_000,
  );

  test.skipIf(!hasNamespace)(
    "a link to a credential or a covered place is still left out",
    async () => {
      const home = tempDir("pencil-tc-home-");
      writeTree(home, { ".ssh/id_ed25519": "PRIVATE-KEY\n", "notes/todo.txt": "private notes\n" });
      const t = workspace();
      symlinkSync(join(home, ".ssh/id_ed25519"), join(t.root, "key"));
      symlinkSync(join(home, "notes/todo.txt"), join(t.root, "todo"));
      symlinkSync("/etc/shadow", join(t.root, "shadow"));
      symlinkSync("/etc/hostname", join(t.root, "hostname"));
      const out = await inPencil(t, "cat key todo shadow 2>&1; ls -A; test -L hostname && echo linked", {
        parentEnv: { PATH: "/usr/bin:/bin", HOME: home },
        realHome: home,
      });
      expect(out).not.toContain("PRIVATE-KEY");
      expect(out).not.toContain("private notes");
      expect(out).toContain("linked");
      expect(out).not.toMatch(/^key$/m);
      expect(out).not.toMatch(/^shadow$/m);
    },
    60_000,
  );
});

/**
 * A stand-in for a shim-based version manager, made in a temp home: a shim that, like pyenv's, embeds its root and
 * falls back to the system's Python when the selected version is not there; and an asdf-like one that finds its root
 * through ASDF_DATA_DIR or $HOME/.asdf, as asdf's own shims do.
 */
function standInHome(): { home: string; path: string } {
  const home = tempDir("pencil-tc-vm-");
  const root = join(home, ".standin");
  const asdf = join(home, ".asdf");
  writeTree(home, {
    ".standin/version": "3.99.1\n",
    ".standin/shims/python": [
      "#!/usr/bin/env bash",
      `root="${root}"`,
      'v=$(cat "$root/version")',
      'if [ -x "$root/versions/$v/bin/python" ]; then exec "$root/versions/$v/bin/python" "$@"; fi',
      'exec python3 "$@"',
      "",
    ].join("\n"),
    ".standin/versions/3.99.1/bin/python": '#!/bin/sh\necho "Python 3.99.1 (stand-in, main) [$0]"\n',
    ".standin/versions/3.99.1/.env": "STANDIN_SECRET=hunter2\n",
    ".asdf/shims/node": [
      "#!/usr/bin/env bash",
      'data="${ASDF_DATA_DIR:-$HOME/.asdf}"',
      'exec "$data/installs/nodejs/20.99.0/bin/node" "$@"',
      "",
    ].join("\n"),
    ".asdf/installs/nodejs/20.99.0/bin/node": '#!/bin/sh\necho "v20.99.0-standin"\n',
  });
  for (const f of [
    ".standin/shims/python",
    ".standin/versions/3.99.1/bin/python",
    ".asdf/shims/node",
    ".asdf/installs/nodejs/20.99.0/bin/node",
  ])
    chmodSync(join(home, f), 0o755);
  return { home, path: `${join(root, "shims")}:${join(asdf, "shims")}:/usr/local/bin:/usr/bin:/bin` };
}

describe("a shim-resolved interpreter is the same version inside as outside", () => {
  test.skipIf(!hasNamespace)(
    "a stand-in version manager in a temp home: python -VV and node -v agree, its root's secrets stay masked",
    async () => {
      const { home, path } = standInHome();
      const env = { PATH: path, HOME: home, LANG: "C.UTF-8" };
      const t = workspace();
      const command = "python -VV; node -v";
      const outside = bare(t.root, command, env);
      expect(outside.stdout).toContain("Python 3.99.1 (stand-in");
      expect(outside.stdout).toContain("v20.99.0-standin");
      const out = await inPencil(t, `${command}; cat ${join(home, ".standin/versions/3.99.1/.env")}`, {
        parentEnv: env,
        realHome: home,
      });
      expect(out).toContain(outside.stdout.trimEnd());
      expect(out).not.toContain("hunter2");
    },
    60_000,
  );

  const pyenvRoot = join(homedir(), ".pyenv");
  // The owner's own PATH, not the tests' hermetic one: this test is about the toolchain the owner really has.
  const pythonIsShim =
    existsSync(join(pyenvRoot, "shims/python")) &&
    spawnSync("bash", ["-c", "command -v python"], {
      encoding: "utf8",
      env: { ...process.env, PATH: ownerPath() },
    }).stdout.trim() === join(pyenvRoot, "shims/python");
  test.skipIf(!hasNamespace || !pythonIsShim)(
    "the machine's real pyenv: python -VV inside is python -VV outside",
    async () => {
      const env = {
        PATH: `${dirname(process.execPath)}:${ownerPath()}`,
        HOME: homedir(),
        LANG: "C.UTF-8",
      };
      const t = workspace();
      const outside = bare(t.root, "python -VV", env);
      expect(outside.status).toBe(0);
      const out = await inPencil(t, "python -VV", { parentEnv: env });
      expect(out).toContain("Exit code 0");
      expect(out).toContain(`Output:\n${outside.stdout.trimEnd()}\n`);
    },
    120_000,
  );
});

test("the stand-in falls back to the system's Python when its versions are not there (what the sandbox must avoid)", () => {
  const { home, path } = standInHome();
  rmSync(join(home, ".standin/versions"), { recursive: true });
  const r = bare(home, "python -VV", { PATH: path, HOME: home });
  expect(r.stdout).not.toContain("stand-in");
});
