// Attempts to get around the namespace sandbox's setup: what runs before the command is confined (the launcher
// shell, unshare, the Bun setup) must not take anything from the confined program's environment or scratch.
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { overlayWorks } from "../../core/scratch/overlay.ts";
import { planHiding } from "../../core/sandbox/hiding.ts";
import { sandboxAvailable, sandboxedLaunch } from "../../core/sandbox/namespace.ts";
import { createRunCommandTool } from "../../tools/run-command.ts";
import { tempDir, writeTree } from "../support/temp.ts";
import { toolContext } from "../support/tool-context.ts";

const hasNamespace = sandboxAvailable();
const hasOverlay = hasNamespace && overlayWorks(tempDir("pencil-lower-"), tempDir("pencil-probe-"));
const RUNTIME_ENV = { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`, LANG: "C.UTF-8" };
if (!hasNamespace) console.warn("sandbox-setup-escapes.test: no namespace sandbox here; these tests are SKIPPED.");

/** A program (`sh -c script`) as a stdio MCP server is launched in the sandbox, in a private directory of its own. */
function shLaunch(script: string) {
  const root = realpathSync(tempDir("pencil-mcp-"));
  const launch = sandboxedLaunch({
    root,
    dir: join(root, "work"),
    command: "/bin/sh",
    args: ["-c", script],
    env: { PATH: "/usr/bin:/bin" },
    hiding: planHiding({
      realHome: tempDir(),
      pencilHome: tempDir(),
      wsRoot: root,
      scratchRoot: root,
      path: "/usr/bin:/bin",
    }),
  })!;
  return { root, launch };
}

describe("sandboxedLaunch (stdio MCP servers): the program's environment stays the program's", () => {
  test.skipIf(!hasNamespace)(
    "BASH_ENV, BUN_OPTIONS or PATH in a server's environment run nothing outside the sandbox",
    () => {
      const root = realpathSync(tempDir("pencil-mcp-"));
      const dir = join(root, "work");
      // Outside every place the sandbox lets the program write: only an unconfined process can make it.
      const outside = realpathSync(tempDir("pencil-outside-"));
      const marker = join(outside, "escaped");
      const fakeBin = join(outside, "bin");
      mkdirSync(fakeBin);
      const launch = sandboxedLaunch({
        root,
        dir,
        command: "/bin/sh",
        args: ["-c", 'test "$SERVER_TOKEN" = kept'],
        env: {
          PATH: `${fakeBin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
          // bash expands BASH_ENV (command substitution included) before any non-interactive `bash -c`.
          BASH_ENV: `$(echo bash > ${marker})`,
          SERVER_TOKEN: "kept",
        },
        hiding: planHiding({
          realHome: tempDir(),
          pencilHome: tempDir(),
          wsRoot: root,
          scratchRoot: root,
          path: process.env.PATH ?? "/usr/bin:/bin",
        }),
      })!;
      // Spawned as the MCP transport does: the launch's own environment, what it gives for the program merged in.
      const r = spawnSync(launch.command, launch.args, { env: launch.env, encoding: "utf8", timeout: 20_000 });
      expect(existsSync(marker)).toBe(false);
      // The program still got its own variables.
      expect(r.status).toBe(0);
    },
    30_000,
  );
});

describe("the kept scratch: what an earlier command left in an ignored tree", () => {
  test.skipIf(!hasOverlay)(
    "a link put in place of a directory does not carry the next command's whiteouts out of the scratch",
    async () => {
      const root = realpathSync(tempDir("pencil-kept-ws-"));
      writeTree(root, {
        "a.txt": "a\n",
        "node_modules/pkg/index.js": "module.exports = 1;\n",
        // Hidden from commands: laid as a whiteout through the overlay before each command that needs it.
        "node_modules/pkg/.env": "PKG_SECRET=1\n",
      });
      // The owner's files elsewhere, named as what the next command's setup removes.
      const victim = realpathSync(tempDir("pencil-victim-"));
      writeTree(victim, { ".env": "OTHER_PROJECT_SECRET=1\n", "index.js": "precious\n" });
      const t = toolContext(root);
      const tool = createRunCommandTool({
        sandbox: "namespace",
        scratch: "overlay",
        scratchParent: tempDir("pencil-kept-parent-"),
        parentEnv: RUNTIME_ENV,
      });
      try {
        const first = await t.run(tool, { command: `rm -rf node_modules/pkg && ln -s ${victim} node_modules/pkg` });
        expect(first).toContain("ignored files");
        // A staged deletion below the link is laid through it too.
        t.overlay.remove(join(root, "node_modules/pkg/index.js"));
        await t.run(tool, { command: "true" });
        expect(readFileSync(join(victim, ".env"), "utf8")).toBe("OTHER_PROJECT_SECRET=1\n");
        expect(readFileSync(join(victim, "index.js"), "utf8")).toBe("precious\n");
      } finally {
        await tool.close?.();
      }
    },
    30_000,
  );
});

describe("the owner's terminal", () => {
  test.skipIf(!hasNamespace)(
    "a sandboxed program started from a terminal session (a stdio MCP server) cannot open it through /dev/tty",
    async () => {
      const { root, launch } = shLaunch("echo FROM-THE-SANDBOX > /dev/tty; echo done > done");
      // As Pencil in the owner's terminal starts it: the terminal is the session's, the server's stdio are pipes.
      let raw = "";
      const decoder = new TextDecoder();
      const proc = Bun.spawn(
        ["/bin/sh", "-c", 'exec "$@" </dev/null >/dev/null 2>&1', "pencil", launch.command, ...launch.args],
        {
          env: launch.env,
          terminal: {
            cols: 80,
            rows: 20,
            data(_term, data) {
              raw += decoder.decode(data, { stream: true });
            },
          },
        },
      );
      await proc.exited;
      // The control: the program ran to its end.
      expect(readFileSync(join(root, "work/done"), "utf8")).toBe("done\n");
      await Bun.sleep(100);
      expect(raw).not.toContain("FROM-THE-SANDBOX");
    },
    30_000,
  );
});

describe("the launcher's process group", () => {
  test.skipIf(!hasNamespace)(
    "a sandboxed program (a stdio MCP server, started in Pencil's own process group) cannot signal the processes of that group",
    () => {
      const { root, launch } = shLaunch('trap "" USR2; kill -USR2 0; echo done > done');
      // "Pencil": a process group of its own (so a signal to the group reaches nothing else), recording what reached it.
      const marker = join(realpathSync(tempDir("pencil-outside-")), "signalled");
      const r = spawnSync(
        "setsid",
        [
          "--wait",
          "/bin/bash",
          "-c",
          `trap 'echo USR2 >> "$0"' USR2; "$@"; true`,
          marker,
          launch.command,
          ...launch.args,
        ],
        { env: launch.env, encoding: "utf8", timeout: 20_000 },
      );
      expect(existsSync(marker)).toBe(false);
      // The control: the program ran to its end (its signal reached neither unshare nor the launcher shell).
      expect(r.status).toBe(0);
      expect(readFileSync(join(root, "work/done"), "utf8")).toBe("done\n");
    },
    30_000,
  );
});

// As root the host reads every directory whatever its mode: only an unprivileged user shows what a chmod 000 does.
const asRoot = process.getuid?.() === 0;
const CHECKOUT = join(import.meta.dir, "../..");
const nobodyRuns =
  asRoot &&
  spawnSync("setpriv", ["--reuid", "65534", "--regid", "65534", "--clear-groups", process.execPath, "--version"], {
    cwd: "/",
  }).status === 0 &&
  spawnSync("setpriv", [
    "--reuid",
    "65534",
    "--regid",
    "65534",
    "--clear-groups",
    "test",
    "-r",
    join(CHECKOUT, "tools/run-command.ts"),
  ]).status === 0;
/** Whether uid 65534 gets an overlay scratch here: asked of the tool's own check, run as nobody, before the tests. */
const nobodyOverlay = (() => {
  if (!hasNamespace || !nobodyRuns) return false;
  const dir = mkdtempSync(join(tmpdir(), "pencil-run-nobody-probe-"));
  chmodSync(dir, 0o1777);
  try {
    const probe = `import { useOverlay } from ${JSON.stringify(join(CHECKOUT, "tools/run-command.ts"))}; process.exit(useOverlay(process.argv[1], { scratch: "overlay", scratchParent: process.argv[1] }) ? 0 : 3);`;
    const r = spawnSync(
      "setpriv",
      ["--reuid", "65534", "--regid", "65534", "--clear-groups", process.execPath, "-e", probe, dir],
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, cwd: dir, timeout: 20_000 },
    );
    return r.status === 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
})();
if (hasNamespace && !nobodyRuns)
  console.warn(
    `sandbox-setup-escapes.test: SKIPPED the unprivileged-user tests: ${asRoot ? `uid 65534 cannot run this checkout's Bun or read ${CHECKOUT}` : "they need root, to run a child as uid 65534"}.`,
  );
if (hasNamespace && nobodyRuns && !nobodyOverlay)
  console.warn(
    "sandbox-setup-escapes.test: SKIPPED the unprivileged-user overlay tests: uid 65534 gets no overlay here.",
  );
const skipNobody = (scratch: string) => !hasNamespace || !nobodyRuns || (scratch === "overlay" && !nobodyOverlay);

describe("a directory the command made unreadable (as an unprivileged user)", () => {
  for (const scratch of ["copy", "overlay"])
    test.skipIf(skipNobody(scratch))(
      `hides nothing from the diff (${scratch}): nothing is staged, no file it holds is reported deleted`,
      () => {
        const dir = mkdtempSync(join(tmpdir(), "pencil-run-nobody-"));
        chmodSync(dir, 0o1777);
        try {
          const child = join(dir, "child.ts");
          writeFileSync(
            child,
            `import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRunCommandTool, useOverlay } from ${JSON.stringify(join(CHECKOUT, "tools/run-command.ts"))};
import { toolContext } from ${JSON.stringify(join(CHECKOUT, "test/support/tool-context.ts"))};
const dir = process.argv[2]!;
const ws = join(dir, "ws");
mkdirSync(join(ws, "src"), { recursive: true });
writeFileSync(join(ws, "src/app.ts"), "original\\n");
mkdirSync(join(dir, "home"));
const scratch = ${JSON.stringify(scratch)};
if (scratch === "overlay" && !useOverlay(ws, { scratch, scratchParent: dir })) { console.log(JSON.stringify({ skip: true })); process.exit(0); }
const t = toolContext(ws, { home: join(dir, "home") });
const tool = createRunCommandTool({ sandbox: "namespace", scratch, scratchParent: dir, realHome: join(dir, "home"), pencilHome: join(dir, "ph"), parentEnv: { PATH: "/usr/bin:/bin" } });
const first = await t.run(tool, { command: "echo unseen >> src/app.ts; chmod 000 src" });
const second = await t.run(tool, { command: "chmod 755 src 2>/dev/null; cat src/app.ts" });
console.log(JSON.stringify({ first, second, staged: t.overlay.list().map((e) => e.real.slice(ws.length + 1)) }));
await tool.close?.();
`,
          );
          chmodSync(child, 0o644);
          const r = spawnSync(
            "setpriv",
            ["--reuid", "65534", "--regid", "65534", "--clear-groups", process.execPath, child, dir],
            { encoding: "utf8", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, cwd: dir, timeout: 20_000 },
          );
          expect(r.stderr).toBe("");
          const out = JSON.parse(r.stdout) as { skip?: boolean; first: string; second: string; staged: string[] };
          // The overlay was there for uid 65534 when the file started: a child that finds none has checked nothing.
          expect(out.skip).toBeUndefined();
          expect(out.first).not.toContain("Staged delete");
          expect(out.first).toContain("unreadable");
          // And the scratch it left is removed, its unreadable directory included.
          expect(out.first).not.toContain("could not be removed");
          expect(out.staged).toEqual([]);
          // Its effects were dropped, so the next command sees the staged view, not what the first hid.
          expect(out.second).not.toContain("unseen");
        } finally {
          spawnSync("chmod", ["-R", "u+rwx", dir]);
          rmSync(dir, { recursive: true, force: true });
        }
      },
      30_000,
    );
});

describe("a file the command changed and left unreadable (as an unprivileged user)", () => {
  for (const scratch of ["copy", "overlay"])
    test.skipIf(skipNobody(scratch))(
      `is reported as unreadable, not as over the byte limit, and not staged (${scratch})`,
      () => {
        const dir = mkdtempSync(join(tmpdir(), "pencil-run-nobody-"));
        chmodSync(dir, 0o1777);
        try {
          const child = join(dir, "child.ts");
          writeFileSync(
            child,
            `import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRunCommandTool, useOverlay } from ${JSON.stringify(join(CHECKOUT, "tools/run-command.ts"))};
import { toolContext } from ${JSON.stringify(join(CHECKOUT, "test/support/tool-context.ts"))};
const dir = process.argv[2]!;
const ws = join(dir, "ws");
mkdirSync(join(ws, "src"), { recursive: true });
writeFileSync(join(ws, "src/app.ts"), "original\\n");
mkdirSync(join(dir, "home"));
const scratch = ${JSON.stringify(scratch)};
if (scratch === "overlay" && !useOverlay(ws, { scratch, scratchParent: dir })) { console.log(JSON.stringify({ skip: true })); process.exit(0); }
const t = toolContext(ws, { home: join(dir, "home") });
const tool = createRunCommandTool({ sandbox: "namespace", scratch, scratchParent: dir, realHome: join(dir, "home"), pencilHome: join(dir, "ph"), parentEnv: { PATH: "/usr/bin:/bin" } });
const out = await t.run(tool, { command: "echo changed >> src/app.ts; echo new > src/new.ts; chmod 000 src/app.ts src/new.ts" });
console.log(JSON.stringify({ out, staged: t.overlay.list().map((e) => e.real.slice(ws.length + 1)) }));
await tool.close?.();
`,
          );
          chmodSync(child, 0o644);
          const r = spawnSync(
            "setpriv",
            ["--reuid", "65534", "--regid", "65534", "--clear-groups", process.execPath, child, dir],
            { encoding: "utf8", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, cwd: dir, timeout: 20_000 },
          );
          expect(r.stderr).toBe("");
          const out = JSON.parse(r.stdout) as { skip?: boolean; out: string; staged: string[] };
          // The overlay was there for uid 65534 when the file started: a child that finds none has checked nothing.
          expect(out.skip).toBeUndefined();
          for (const rel of ["src/app.ts", "src/new.ts"])
            expect(out.out).toContain(`Not staged: ${rel}, because the command left it unreadable (its permissions)`);
          expect(out.out).not.toContain("byte limit");
          expect(out.staged).toEqual([]);
        } finally {
          spawnSync("chmod", ["-R", "u+rwx", dir]);
          rmSync(dir, { recursive: true, force: true });
        }
      },
      30_000,
    );
});
