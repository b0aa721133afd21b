// The namespace sandbox's probe runs in the background while the first command of a process is planned; these tests
// start fresh processes, so the probe's answer is not known when their command arrives.
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { sandboxAvailable } from "../../core/sandbox/namespace.ts";
import { tempDir } from "../support/temp.ts";

const CHECKOUT = join(import.meta.dir, "..", "..");

/** A program that runs one command with run_command (`sandbox` as given) in a fresh process and prints what it got. */
function program(sandbox: string): string {
  return `
import { createRunCommandTool } from ${JSON.stringify(join(CHECKOUT, "tools/run-command.ts"))};
import { sandboxKnown } from ${JSON.stringify(join(CHECKOUT, "core/sandbox/namespace.ts"))};
import { toolContext } from ${JSON.stringify(join(CHECKOUT, "test/support/tool-context.ts"))};
const dir = process.argv.at(-1);
const t = toolContext(dir + "/ws", { home: dir + "/home" });
const records = [];
t.ctx.recordCommand = (r) => records.push(r);
const tool = createRunCommandTool({ sandbox: ${JSON.stringify(sandbox)}, scratchParent: dir, realHome: dir + "/home", pencilHome: dir + "/ph", parentEnv: { PATH: "/usr/bin:/bin" } });
const knownBefore = sandboxKnown() ?? null;
let text;
try { text = await t.run(tool, { command: "echo ran; echo $$" }); } catch (error) { text = "ToolError: " + error.message; }
await tool.close();
console.log(JSON.stringify({ knownBefore, text, sandbox: records[0]?.sandbox ?? null }));
`;
}

/** Runs program(sandbox) in a fresh process; `noUserNamespaces` runs it where no user namespace can be made. */
function runFresh(sandbox: string, noUserNamespaces: boolean) {
  const dir = tempDir("pencil-probe-test-");
  mkdirSync(join(dir, "ws"));
  mkdirSync(join(dir, "home"));
  const argv = [process.execPath, "-e", program(sandbox), dir];
  // Inside a user namespace of its own, its limit on nested user namespaces set to 0: unshare --user fails there.
  const r = noUserNamespaces
    ? spawnSync(
        "unshare",
        [
          "--user",
          "--map-root-user",
          "sh",
          "-c",
          'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"',
          "sh",
          ...argv,
        ],
        { encoding: "utf8", timeout: 60_000 },
      )
    : spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as {
    knownBefore: boolean | null;
    text: string;
    sandbox: string | null;
  };
}

describe("run_command: the first command of a process, while the sandbox's probe is running", () => {
  test.skipIf(!sandboxAvailable())("auto: planned meanwhile, run in the namespace once the probe passes", () => {
    const got = runFresh("auto", false);
    expect(got.knownBefore).toBeNull();
    expect(got.text).toContain("Exit code 0");
    expect(got.text).toContain("ran");
    // The command's shell is a child of the namespace's init: its pid is a small number of the private pid namespace.
    expect(Number(got.text.match(/^ran\n(\d+)$/m)?.[1])).toBeLessThan(10);
    expect(got.sandbox).toBe("namespace");
  });

  test.skipIf(!sandboxAvailable())(
    "where user namespaces cannot be made: auto runs the command unconfined, as it would with the answer known; namespace refuses",
    () => {
      const auto = runFresh("auto", true);
      expect(auto.knownBefore).toBeNull();
      expect(auto.text).toContain("Exit code 0");
      expect(auto.sandbox).toBe("plain");
      const forced = runFresh("namespace", true);
      expect(forced.text).toContain("ToolError: The namespace sandbox is not available on this system");
      expect(forced.text).not.toContain("ran");
      expect(forced.sandbox).toBeNull();
    },
  );
});
