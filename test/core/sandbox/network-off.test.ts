import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { CommandRecord } from "../../../core/staging/command-record.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { createRunCommandTool } from "../../../tools/run-command.ts";
import { tempDir } from "../../support/temp.ts";
import { toolContext } from "../../support/tool-context.ts";

const hasNamespace = sandboxAvailable();
const has = (tool: string) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0;
const PATH = `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`;

const dir = tempDir("pencil-network-off-");
const ws = join(dir, "ws");
mkdirSync(ws);
mkdirSync(join(dir, "home"));
writeFileSync(join(ws, "package.json"), '{ "name": "offline-probe", "version": "1.0.0" }\n');
const t = toolContext(ws, { home: join(dir, "home") });
const records: CommandRecord[] = [];
t.ctx.recordCommand = (r) => records.push(r);
// One tool for the file: its kept scratch is shared by the tests, as by a run's commands.
const tool = createRunCommandTool({
  sandbox: "namespace",
  scratchParent: dir,
  realHome: join(dir, "home"),
  pencilHome: join(dir, "ph"),
  parentEnv: { PATH, LANG: "C.UTF-8" },
});
afterAll(() => tool.close?.());

/** The command's own run time, as the answer's second line gives it. */
const secondsOf = (out: string) =>
  Number(/^(?:Exit code -?\d+|Timed out) after ([\d.]+) s/m.exec(out)?.[1] ?? Number.NaN);

describe("with the network off, a command's attempt fails at once and the answer names the hosts and the setting", () => {
  test.skipIf(!hasNamespace || !has("npm"))(
    "(needs the namespace sandbox and npm) npm install of a package in no cache fails within 5 s, the registry named, the setting given",
    async () => {
      const name = `pencil-offline-probe-${process.pid}`;
      const out = await t.run(tool, { command: `npm install ${name}@1.0.0 --no-audit --no-fund` });
      expect(secondsOf(out)).toBeLessThan(5);
      // npm prints the refusal, which names the setting.
      expect(out).toContain("403 Network off for commands in Pencil (sandbox.network)");
      expect(out).toContain("REFUSED at once: CONNECT registry.npmjs.org:443");
      expect(out).toContain('"sandbox": {"network": true}');
      expect(out).toContain("Net(host)");
      const record = records.at(-1)!;
      expect(record.network).toBe("none");
      expect((record.connections ?? []).map((c) => `${c.method} ${c.host}:${c.port} ${c.allowed}`)).toContain(
        "CONNECT registry.npmjs.org:443 false",
      );
    },
    30_000,
  );

  test.skipIf(!hasNamespace || !has("curl"))(
    "(needs the namespace sandbox and curl) plain HTTP gets a 403 whose body names the setting; a client that skips the proxy fails to resolve at once, its host named",
    async () => {
      const out = await t.run(tool, {
        command:
          "curl -sS http://plain.pencil.test/pkg; echo; curl -sS --noproxy '*' https://direct.pencil.test/ ; echo done",
      });
      expect(secondsOf(out)).toBeLessThan(5);
      expect(out).toContain("Pencil: the network is off for commands, so http://plain.pencil.test/pkg was not reached");
      expect(out).toContain("REFUSED at once: GET http://plain.pencil.test/pkg");
      expect(out).toContain("Could not resolve host: direct.pencil.test");
      expect(out).toContain("could not resolve: direct.pencil.test (no network to ask)");
      expect(out).toContain('"sandbox": {"network": true}');
    },
    30_000,
  );

  test.skipIf(!hasNamespace)(
    "(needs the namespace sandbox) a command that uses no network says nothing of it, and local servers on its own loopback still work",
    async () => {
      const out = await t.run(tool, {
        command: `${process.execPath} -e 'const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("local ok") }); console.log(await (await fetch("http://127.0.0.1:" + s.port)).text()); s.stop(true)'`,
      });
      expect(out).toContain("local ok");
      expect(out).not.toContain("Network:");
    },
    30_000,
  );
});
