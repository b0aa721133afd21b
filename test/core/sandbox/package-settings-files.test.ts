import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import type { CommandRecord } from "../../../core/staging/command-record.ts";
import { compilePolicy, decide } from "../../../core/policy/policy.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import type { ScratchKind } from "../../../core/scratch/overlay.ts";
import { createRunCommandTool } from "../../../tools/run-command.ts";
import { realTempDir as tempDir, writeTree } from "../../support/temp.ts";
import { toolContext } from "../../support/tool-context.ts";

// yarn's .yarnrc.yml, pip's pip.conf (a virtualenv's own, or PIP_CONFIG_FILE's) and .pypirc in the workspace reach a
// command filtered like .npmrc: their settings kept, every credential gone, read-only, never a change in the review.

const YARN_TOKEN = "yarn-t0ken-abcdef0123456789";
const SCOPE_TOKEN = "sc0pe-t0ken-abcdef0123456789";
const IDENT = "me:hunter2hunter2";
const PIP_PASSWORD = "pip-pa55word-0123456789";
const PYPIRC_PASSWORD = "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAAC";
const SECRETS = [YARN_TOKEN, SCOPE_TOKEN, IDENT, "hunter2", PIP_PASSWORD, PYPIRC_PASSWORD];

const YARNRC = [
  'npmRegistryServer: "http://127.0.0.1:4873"',
  `npmAuthToken: ${YARN_TOKEN}`,
  "npmScopes:",
  "  acme:",
  "    npmRegistryServer: https://npm.acme.example",
  `    npmAuthIdent: "${IDENT}"`,
  "npmRegistries:",
  '  "//npm.acme.example":',
  `    npmAuthToken: ${SCOPE_TOKEN}`,
  "    npmAlwaysAuth: true",
  "nodeLinker: node-modules",
  "",
].join("\n");

const SYSTEM_PYTHON = "/usr/bin/python3";
const hasNamespace = sandboxAvailable();
// A virtualenv without its own pip (quick to make) that imports the system's: pip reads the virtualenv's pip.conf.
const hasVenv = existsSync(SYSTEM_PYTHON) && spawnSync(SYSTEM_PYTHON, ["-c", "import venv, pip"]).status === 0;

function session(root: string, home: string) {
  const t = toolContext(root);
  const policy = compilePolicy({ workspaceRoot: t.ws.root, home, pencilHome: tempDir(), rules: [] });
  t.ctx.visible = (real) => decide(policy, { tool: "run_command", access: "read", real }).decision === "allow";
  const records: CommandRecord[] = [];
  t.ctx.recordCommand = (r) => records.push(r);
  return { ...t, records };
}

describe.each(["overlay", "copy"] as ScratchKind[])(
  "yarn and pip settings without their credentials (%s)",
  (scratch) => {
    test.skipIf(!hasNamespace || !hasVenv)(
      "a .yarnrc.yml (top and nested), a virtualenv's pip.conf, PIP_CONFIG_FILE's and a .pypirc: settings kept, no token readable, nothing staged",
      async () => {
        const home = tempDir("pencil-pmf-home-");
        writeTree(home, {
          ".yarnrc.yml": `npmRegistryServer: "http://127.0.0.1:4875"\nnpmAuthToken: ${YARN_TOKEN}\n`,
          ".pypirc": `[pypi]\nrepository = https://home.acme.example/legacy/\npassword = ${PYPIRC_PASSWORD}\n`,
        });
        const root = tempDir("pencil-pmf-ws-");
        writeTree(root, {
          "package.json": '{ "name": "p", "version": "1.0.0" }\n',
          ".yarnrc.yml": YARNRC,
          "packages/a/.yarnrc.yml": `npmRegistryServer: "http://127.0.0.1:4874"\nnpmAuthToken: ${YARN_TOKEN}\n`,
          "pip.conf": `[global]\nindex-url = https://me:${PIP_PASSWORD}@pypi.acme.example/simple\ntimeout = 61\n`,
          ".pypirc": `[distutils]\nindex-servers = acme\n[acme]\nrepository = https://upload.acme.example/legacy/\nusername = __token__\npassword = ${PYPIRC_PASSWORD}\n`,
        });
        // A settings name that is a link is never followed: it could lead anywhere (here, a private file outside).
        const outside = tempDir("pencil-pmf-outside-");
        writeTree(outside, { "notes.txt": "[global]\ntimeout = 5\nOUTSIDE-LINKED-NOTE\n" });
        mkdirSync(join(root, "linked"));
        symlinkSync(join(outside, "notes.txt"), join(root, "linked/pip.conf"));
        const env = {
          PATH: "/usr/local/bin:/usr/bin:/bin",
          HOME: home,
          LANG: "C.UTF-8",
          PIP_CONFIG_FILE: join(root, "pip.conf"),
        };
        expect(
          spawnSync(SYSTEM_PYTHON, ["-m", "venv", "--without-pip", "--system-site-packages", ".venv"], {
            cwd: root,
            env,
          }).status,
        ).toBe(0);
        writeTree(root, {
          ".venv/pip.conf": `[global]\nextra-index-url = https://__token__:${PIP_PASSWORD}@extra.acme.example/simple\n[install]\npassword = ${PIP_PASSWORD}\n`,
        });
        // What pip makes of the files bare, as the owner's shell runs it: the same settings, with the credentials.
        const bare = spawnSync("bash", ["-c", ".venv/bin/python -m pip config list"], {
          cwd: root,
          env,
          encoding: "utf8",
        });
        expect(bare.stdout).toContain(PIP_PASSWORD);
        const t = session(root, home);
        const scratchParent = tempDir();
        const tool = createRunCommandTool({
          sandbox: "namespace",
          scratch,
          scratchParent,
          realHome: home,
          parentEnv: env,
        });
        try {
          const out = await t.run(tool, {
            command: [
              ".venv/bin/python -m pip config list",
              "echo ---",
              "cat linked/pip.conf 2>/dev/null",
              "cat .yarnrc.yml packages/a/.yarnrc.yml .pypirc .venv/pip.conf ~/.yarnrc.yml ~/.pypirc",
              "echo ---",
              "(echo x >> .yarnrc.yml) 2>/dev/null || echo yarnrc-read-only",
              "(echo x >> .venv/pip.conf) 2>/dev/null || echo pipconf-read-only",
            ].join("; "),
          });
          expect(out).toContain("Exit code 0");
          // pip applies every file: the site (virtualenv) one, and the one PIP_CONFIG_FILE names, their URLs without the user.
          expect(out).toContain("global.index-url='https://pypi.acme.example/simple'");
          expect(out).toContain("global.timeout='61'");
          expect(out).toContain("global.extra-index-url='https://extra.acme.example/simple'");
          // yarn's registries and scopes stay, each token and ident goes.
          expect(out).toContain('npmRegistryServer: "http://127.0.0.1:4873"');
          expect(out).toContain("    npmRegistryServer: https://npm.acme.example");
          expect(out).toContain('  "//npm.acme.example":\n    npmAlwaysAuth: true\nnodeLinker: node-modules');
          expect(out).toContain('npmRegistryServer: "http://127.0.0.1:4874"');
          expect(out).toContain("repository = https://upload.acme.example/legacy/");
          // The owner's own, in the command's HOME, the same way.
          expect(out).toContain('npmRegistryServer: "http://127.0.0.1:4875"');
          expect(out).toContain("repository = https://home.acme.example/legacy/");
          expect(out).not.toMatch(/npmAuthToken|npmAuthIdent|username|password/);
          expect(out).not.toContain("OUTSIDE-LINKED-NOTE");
          expect(out).toContain("yarnrc-read-only");
          expect(out).toContain("pipconf-read-only");
          expect(out).toContain("No file changes.");
          for (const text of [out, JSON.stringify(records(t))]) for (const s of SECRETS) expect(text).not.toContain(s);
          expect(t.overlay.list()).toEqual([]);
          expect(readFileSync(join(root, ".yarnrc.yml"), "utf8")).toBe(YARNRC);
          expect(readFileSync(join(root, ".venv/pip.conf"), "utf8")).toContain(PIP_PASSWORD);

          // A staged edit of .yarnrc.yml is what the next command sees, filtered the same way.
          t.ctx.fs.writeBytes(
            join(root, ".yarnrc.yml"),
            new TextEncoder().encode(`npmRegistryServer: "http://127.0.0.1:4999"\nnpmAuthToken: ${YARN_TOKEN}\n`),
          );
          const second = await t.run(tool, { command: "cat .yarnrc.yml" });
          expect(second).toContain('npmRegistryServer: "http://127.0.0.1:4999"');
          expect(second).not.toContain(YARN_TOKEN);
          expect(t.overlay.list().map((e) => e.real)).toEqual([join(root, ".yarnrc.yml")]);
        } finally {
          await tool.close?.();
        }
        expect(readdirSync(scratchParent)).toEqual([]);
      },
      60_000,
    );
  },
);

describe.each(["overlay", "copy"] as ScratchKind[])(
  "a settings file the agent created, not yet on disk (%s)",
  (scratch) => {
    test.skipIf(!hasNamespace)(
      "a command sees it filtered, read-only, at its path; later commands see its newer staged text; it is never a command's change",
      async () => {
        const home = tempDir("pencil-pmf-home-");
        const root = tempDir("pencil-pmf-ws-");
        writeTree(root, { "package.json": '{ "name": "p", "version": "1.0.0" }\n' });
        const t = session(root, home);
        const staged = (registry: string) =>
          t.ctx.fs.writeBytes(
            join(root, "sub/.npmrc"),
            new TextEncoder().encode(`registry=${registry}\n//r.example/:_authToken=${YARN_TOKEN}\n`),
          );
        staged("https://r.example/one/");
        const scratchParent = tempDir();
        const tool = createRunCommandTool({
          sandbox: "namespace",
          scratch,
          scratchParent,
          realHome: home,
          parentEnv: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home },
        });
        try {
          const first = await t.run(tool, {
            command:
              "cat sub/.npmrc; (echo x >> sub/.npmrc) 2>/dev/null || echo npmrc-read-only; rm -f sub/.npmrc 2>/dev/null; true",
          });
          expect(first).toContain("registry=https://r.example/one/");
          expect(first).toContain("npmrc-read-only");
          expect(first).toContain("No file changes.");
          staged("https://r.example/two/");
          const second = await t.run(tool, { command: "cat sub/.npmrc" });
          expect(second).toContain("registry=https://r.example/two/");
          expect(second).not.toContain("r.example/one/");
          expect(second).toContain("No file changes.");
          for (const text of [first, second, JSON.stringify(records(t))]) expect(text).not.toContain(YARN_TOKEN);
          // The staged file is the agent's, unchanged: its token and all.
          expect(t.overlay.list().map((e) => e.real)).toEqual([join(root, "sub/.npmrc")]);
          expect(new TextDecoder().decode(t.overlay.list()[0]!.after!.bytes)).toContain(YARN_TOKEN);
          expect(existsSync(join(root, "sub"))).toBe(false);
        } finally {
          await tool.close?.();
        }
        expect(readdirSync(scratchParent)).toEqual([]);
      },
      60_000,
    );
  },
);

function records(t: ReturnType<typeof session>): CommandRecord[] {
  return t.records;
}

describe("package managers' settings are secret to the agent's own readers", () => {
  const names = [".yarnrc", ".yarnrc.yml", "pip.conf", "pip.ini", ".npmrc", ".pypirc"];
  for (const name of names) {
    test(`${name}: read_file, search and list_files never get it; it is never written`, () => {
      const root = tempDir("pencil-pkg-secret-");
      const home = tempDir("pencil-pkg-home-");
      const policy = compilePolicy({ workspaceRoot: root, home, pencilHome: tempDir(), rules: [] });
      for (const at of [join(root, name), join(root, "sub", ".venv", name)]) {
        expect(decide(policy, { tool: "read_file", access: "read", real: at }).decision).toBe("deny");
        expect(decide(policy, { tool: "search", access: "read", real: at }).decision).toBe("deny");
        expect(decide(policy, { tool: "write_file", access: "write", real: at }).decision).toBe("deny");
      }
    });
  }
});
