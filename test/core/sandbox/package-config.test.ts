import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CommandRecord } from "../../../core/staging/command-record.ts";
import { compilePolicy, decide } from "../../../core/policy/policy.ts";
import { withoutCredentials } from "../../../core/sandbox/package-config.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { createRunCommandTool } from "../../../tools/run-command.ts";
import type { ScratchKind } from "../../../core/scratch/overlay.ts";
import { realTempDir as tempDir, writeTree } from "../../support/temp.ts";
import { toolContext } from "../../support/tool-context.ts";

const TOKEN = "npm_abcdefghijklmnopqrstuvwxyz0123456789";
const HOME_TOKEN = "s3cr3t-home-t0ken-value";

describe("withoutCredentials", () => {
  test("every credential line goes; registries, scopes and plain settings stay", () => {
    const npmrc = [
      "registry=http://127.0.0.1:4873/",
      "@acme:registry=https://npm.acme.example/",
      `//127.0.0.1:4873/:_authToken=${TOKEN}`,
      "//npm.acme.example/:_auth=dXNlcjpwYXNz",
      "//npm.acme.example/:_password=cGFzcw==",
      "//npm.acme.example/:username=me",
      "_authToken=${NPM_TOKEN}",
      "always-auth=true",
      "save-exact=true",
      "; a comment",
    ].join("\n");
    expect(withoutCredentials(npmrc)).toBe(
      [
        "registry=http://127.0.0.1:4873/",
        "@acme:registry=https://npm.acme.example/",
        "always-auth=true",
        "save-exact=true",
        "; a comment",
      ].join("\n"),
    );
    const yarnrc = [
      "nodeLinker: node-modules",
      'npmRegistryServer: "https://registry.acme.example"',
      "npmAuthToken: abcdef0123456789abcdef",
      "npmScopes:",
      "  acme:",
      "    npmAuthIdent: me:pass",
      "    npmRegistryServer: https://npm.acme.example",
    ].join("\n");
    expect(withoutCredentials(yarnrc)).toBe(
      [
        "nodeLinker: node-modules",
        'npmRegistryServer: "https://registry.acme.example"',
        "npmScopes:",
        "  acme:",
        "    npmRegistryServer: https://npm.acme.example",
      ].join("\n"),
    );
    const pip = [
      "[global]",
      "index-url = https://me:hunter2@pypi.acme.example/simple",
      "extra-index-url =",
      "    https://__token__:pypi-secret@other.example/simple",
      "    https://pypi.org/simple",
      "timeout = 60",
    ].join("\n");
    // A URL keeps its host and path (pip still uses the owner's index), never its user or password.
    expect(withoutCredentials(pip)).toBe(
      [
        "[global]",
        "index-url = https://pypi.acme.example/simple",
        "extra-index-url =",
        "    https://other.example/simple",
        "    https://pypi.org/simple",
        "timeout = 60",
      ].join("\n"),
    );
  });
});

const hasNamespace = sandboxAvailable();
const hasNpm = spawnSync("npm", ["--version"]).status === 0;

describe.each(["overlay", "copy"] as ScratchKind[])(
  "package-manager settings reach the command without their tokens (%s)",
  (scratch) => {
    test.skipIf(!hasNamespace || !hasNpm)(
      "a project .npmrc: npm sees its registry, cat shows no token line, the review stages nothing for it, no record holds the token",
      async () => {
        const home = tempDir("pencil-pm-home-");
        writeTree(home, {
          ".npmrc": `@acme:registry=https://npm.acme.example/\n//npm.acme.example/:_authToken=${HOME_TOKEN}\n`,
          ".tool-versions": "nodejs 20.99.0\n",
        });
        const root = tempDir("pencil-pm-ws-");
        writeTree(root, {
          "package.json": '{ "name": "p", "version": "1.0.0" }\n',
          ".npmrc": `registry=http://127.0.0.1:4873/\n//127.0.0.1:4873/:_authToken=${TOKEN}\n`,
        });
        const t = toolContext(root);
        const policy = compilePolicy({ workspaceRoot: t.ws.root, home, pencilHome: tempDir(), rules: [] });
        t.ctx.visible = (real) => decide(policy, { tool: "run_command", access: "read", real }).decision === "allow";
        const records: CommandRecord[] = [];
        t.ctx.recordCommand = (r) => records.push(r);
        const scratchParent = tempDir();
        const tool = createRunCommandTool({
          sandbox: "namespace",
          scratch,
          scratchParent,
          realHome: home,
          parentEnv: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, npm_config_update_notifier: "false" },
        });
        try {
          const out = await t.run(tool, {
            command:
              "npm config get registry; npm config get @acme:registry; echo ---; cat .npmrc; echo ---; cat ~/.npmrc; cat ~/.tool-versions; echo x > .npmrc || echo read-only",
          });
          expect(out).toContain("\nhttp://127.0.0.1:4873/\nhttps://npm.acme.example/\n");
          expect(out).toContain(
            "---\nregistry=http://127.0.0.1:4873/\n---\n@acme:registry=https://npm.acme.example/\n",
          );
          expect(out).toContain("nodejs 20.99.0");
          expect(out).toContain("read-only");
          expect(out).not.toContain("_authToken");
          expect(out).toContain("No file changes.");
          // Nothing staged for .npmrc, the disk's file as it was, the token in no output or record, no scratch left.
          expect(t.overlay.list()).toEqual([]);
          expect(readFileSync(join(root, ".npmrc"), "utf8")).toContain(TOKEN);
          for (const text of [out, JSON.stringify(records)]) {
            expect(text).not.toContain(TOKEN);
            expect(text).not.toContain(HOME_TOKEN);
          }
          const second = await t.run(tool, { command: "cat .npmrc && ls -A" });
          expect(second).toContain("registry=http://127.0.0.1:4873/");
          expect(second).not.toContain(TOKEN);
          expect(t.overlay.list()).toEqual([]);
        } finally {
          await tool.close?.();
        }
        expect(readdirSync(scratchParent)).toEqual([]);
      },
      60_000,
    );
  },
);
