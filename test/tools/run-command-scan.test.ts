import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { sandboxAvailable } from "../../core/sandbox/namespace.ts";
import { createRunCommandTool } from "../../tools/run-command.ts";
import { tempDir, writeTree } from "../support/temp.ts";
import { toolContext } from "../support/tool-context.ts";

// run_command remembers its search for denied entries between commands (scan-cache.ts):
// a secret that appears in a kept directory after one command is hidden from the next.

const hasNamespace = sandboxAvailable();
const RUNTIME_PATH = `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`;

describe("namespace sandbox: the remembered search for secrets", () => {
  test.skipIf(!hasNamespace)(
    "a .env made, or brought by a directory renamed in, inside a kept toolchain directory between two commands is hidden from the second",
    async () => {
      const base = realpathSync(tempDir("pencil-run-scan-"));
      // An install prefix in a sibling checkout whose bin/ is on PATH: the prefix is kept, so searched for secrets.
      const main = join(base, "checkout/sdk");
      writeTree(main, { "bin/tool": "#!/bin/sh\necho tool-ok\n", "lib/deep/er/mod.txt": "MOD-OK\n" });
      chmodSync(join(main, "bin/tool"), 0o755);
      const root = join(base, "ws");
      writeTree(root, { "README.md": "hello\n" });
      const t = toolContext(root);
      const tool = createRunCommandTool({
        sandbox: "namespace",
        scratchParent: tempDir("pencil-run-scan-parent-"),
        parentEnv: { PATH: `${main}/bin:${RUNTIME_PATH}`, LANG: "C.UTF-8" },
      });
      const first = await t.run(tool, { command: `tool; cat ${main}/lib/deep/er/mod.txt` });
      expect(first).toContain("tool-ok\nMOD-OK\n");

      writeFileSync(join(main, "lib/deep/er/.env"), "LATE-ENV-SECRET\n");
      const outside = realpathSync(tempDir("pencil-run-scan-outside-"));
      mkdirSync(join(outside, "pkg/sub"), { recursive: true });
      writeFileSync(join(outside, "pkg/sub/.env.local"), "MOVED-IN-SECRET\n");
      renameSync(join(outside, "pkg"), join(main, "lib/pkg"));

      const second = await t.run(tool, {
        command: `cat ${main}/lib/deep/er/.env ${main}/lib/pkg/sub/.env.local; tool; cat ${main}/lib/deep/er/mod.txt`,
      });
      expect(second).not.toContain("LATE-ENV-SECRET");
      expect(second).not.toContain("MOVED-IN-SECRET");
      expect(second).toContain("tool-ok\nMOD-OK\n");
    },
  );
});
