import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hostUnixSockets, planHiding, SYSTEM_TOPS } from "../../core/sandbox/hiding.ts";
import { createRunCommandTool } from "../../tools/run-command.ts";
import { ToolError } from "../../core/errors/tool-error.ts";
import { writeTree } from "../support/temp.ts";
import { toolContext } from "../support/tool-context.ts";
import {
  after,
  fakeHome,
  hasGit,
  hasNamespace,
  RUNTIME_PATH,
  setup,
  tempDir,
  testFileName,
} from "../support/run-command-world.ts";

// What a sandboxed command cannot see: the real home, Pencil's state, siblings of the workspace, .env files and
// credentials anywhere, host sockets.

describe("namespace sandbox: the real home and Pencil's state are hidden", () => {
  test.skipIf(!hasNamespace)(
    "credentials, the rest of home and PENCIL_HOME are hidden; the toolchain on PATH still runs",
    async () => {
      const h = fakeHome();
      const { run } = setup("namespace", {}, h.options);
      const out = await run(
        `cat ${h.home}/.ssh/id_rsa ${h.home}/.netrc ${h.home}/.config/gh/hosts.yml ${h.home}/notes.txt ${h.home}/opt/secret.txt ${h.elsewhere}/aws/credentials; ` +
          `ls -A ${h.home}/.pencil ${h.pencilHome}; cat ${h.home}/.pencil/changesets/c1.json ${h.pencilHome}/state.json; ` +
          `acme; greet; mynode; "${process.execPath}" --version; echo "home=[$(ls -A ${h.home} | tr '\\n' ' ')]"; touch ${h.home}/.local/bin/x; ` +
          // Into a file, not a pipe: the shell holds a pipe's end while it starts the other side, which would show as fd 3.
          `echo fds:; ls /proc/$$/fd > "$TMPDIR/fds"; tr '\\n' ' ' < "$TMPDIR/fds"`,
      );
      for (const secret of h.secrets) expect(out).not.toContain(secret);
      expect(out).toContain(".ssh/id_rsa: No such file or directory");
      expect(out).toContain("acme-ok\ngreet-ok\nnvm-ok\n" + Bun.version);
      // Only what the command needs is back under home; the kept directories are read-only.
      expect(out).toContain("home=[.local .nvm opt tools ]");
      expect(out).toContain(".local/bin/x': Read-only file system");
      expect(existsSync(join(h.home, ".local/bin/x"))).toBe(false);
      // No descriptor opened to re-bind the kept directories is left open: through one, ".." would reach the real home.
      expect(out).toContain("fds:\n0 1 2 \n");
    },
  );

  test.skipIf(!hasNamespace)(
    "a toolchain directory too large to be searched for secrets is not shown, and the answer says which",
    async () => {
      const h = fakeHome();
      const { run } = setup("namespace", {}, { ...h.options, scanLimit: 2 });
      const out = await run("mynode; echo after");
      expect(out).not.toContain("nvm-ok");
      expect(out).toMatch(/Note: .*\.nvm.* too many entries to be searched for secrets, so the command could not see/);
      for (const secret of h.secrets) expect(out).not.toContain(secret);
    },
  );

  test.skipIf(!hasNamespace)(
    "a workspace and scratch directory inside the real home stay reachable; its secrets do not",
    async () => {
      const h = fakeHome();
      const root = join(h.home, "proj");
      writeTree(root, { "src/app.ts": "export const a = 1;\n" });
      const scratchParent = join(h.home, "scratch");
      mkdirSync(scratchParent);
      const t = toolContext(root);
      const tool = createRunCommandTool({ sandbox: "namespace", scratchParent, ...h.options });
      const out = await t.run(tool, {
        command: `cat src/app.ts; echo new > new.txt; cat ${h.home}/.ssh/id_rsa; cat ${h.home}/notes.txt; pwd`,
      });
      expect(out).toContain("export const a = 1;");
      expect(out).toContain(`\n${t.ws.root}\n`);
      expect(out).toContain("Staged create: new.txt");
      for (const secret of h.secrets) expect(out).not.toContain(secret);
      await tool.close?.();
      expect(readdirSync(scratchParent)).toEqual([]);
    },
  );

  test.skipIf(!hasNamespace)(
    "Pencil's own environment and working directory are out of reach through /proc: its pid namespace shows no host process",
    async () => {
      const { run } = setup("namespace");
      const out = await run(
        `echo "ppid=$PPID self=$$"; tr '\\0' '\\n' < /proc/${process.pid}/environ | head -3; ls /proc/${process.pid}/cwd/ | head -3; ls /proc | grep -c '^[0-9]'; echo done`,
      );
      // The command is init of its own pid namespace: no parent, and Pencil's pid names nothing (or one of its own few processes).
      expect(out).toContain("ppid=0 self=1");
      expect(Number(/\n(\d+)\ndone/.exec(out)?.[1])).toBeLessThan(10);
      expect(out).not.toContain("PATH=");
      expect(out).not.toContain("package.json");
    },
  );

  test.skipIf(!hasNamespace)(
    "a setup that fails never downgrades: the command does not run and the error says why",
    async () => {
      const outside = tempDir();
      const notADirectory = join(outside, "home-file");
      writeFileSync(notADirectory, "");
      for (const sandbox of ["auto", "namespace"] as const) {
        const { run, scratchParent, close } = setup(sandbox, {}, { realHome: notADirectory });
        const error = await run(`touch ${outside}/ran-${sandbox}`).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ToolError);
        expect((error as Error).message).toMatch(
          /^The sandbox could not be set up \(cannot cover .*home-file: [A-Za-z ]+\), so the command did not run\./,
        );
        expect(existsSync(join(outside, `ran-${sandbox}`))).toBe(false);
        await close();
        expect(readdirSync(scratchParent)).toEqual([]);
      }
    },
  );
});

describe("namespace sandbox: sibling projects of the workspace's ancestors", () => {
  test.skipIf(!hasNamespace || !hasGit)(
    "sibling projects vanish; a kept PATH directory shows no .env, .envrc, key or .git/config at any depth; git status and the toolchain still work",
    async () => {
      const base = tempDir("pencil-run-anc-");
      // A sibling checkout whose bin/ is on PATH: its prefix (the whole checkout) is kept for the toolchain.
      const main = join(base, "main");
      writeTree(main, {
        "bin/tool": "#!/bin/sh\necho tool-ok\n",
        ".env": "SIBLING-ENV-1\n",
        "app/.env.local": "SIBLING-ENV-2\n",
        "app/.envrc": "SIBLING-ENVRC\n",
        "app/id_rsa": "SIBLING-KEY\n",
        ".git/config": "[remote]\n url = https://GIT-TOKEN@x/y\n",
      });
      chmodSync(join(main, "bin/tool"), 0o755);
      writeFileSync(join(base, ".env"), "PARENT-ENV\n");
      // A sibling project nothing leads to: gone with the rest of the ancestor.
      writeTree(join(base, "other"), {
        ".env": "OTHER-ENV\n",
        ".git/config": "[remote]\n url = https://OTHER-TOKEN@x/y\n",
        "notes.txt": "OTHER-NOTES\n",
      });
      const root = join(base, "ws");
      writeTree(root, { "README.md": "hello\n" });
      const git = (...a: string[]) =>
        spawnSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", ...a], { cwd: root });
      git("init", "-q");
      git("add", ".");
      git("commit", "-qm", "init");
      const t = toolContext(root);
      const tool = createRunCommandTool({
        sandbox: "namespace",
        scratchParent: tempDir("pencil-run-parent-"),
        parentEnv: { PATH: `${main}/bin:${RUNTIME_PATH}`, LANG: "C.UTF-8" },
      });
      const out = await t.run(tool, {
        command: `cat ${main}/.env ${main}/app/.env.local ${main}/app/.envrc ${main}/app/id_rsa ${main}/.git/config ${base}/.env ${base}/other/.env ${base}/other/.git/config ${base}/other/notes.txt; echo "ls=[$(ls -A ${base} | tr '\\n' ' ')]"; tool; git status --short; echo git=$?; "${process.execPath}" --version`,
      });
      for (const secret of [
        "SIBLING-ENV",
        "SIBLING-ENVRC",
        "SIBLING-KEY",
        "GIT-TOKEN",
        "PARENT-ENV",
        "OTHER-ENV",
        "OTHER-TOKEN",
        "OTHER-NOTES",
      ])
        expect(out).not.toContain(secret);
      // Of the ancestor, only the path to the workspace and what PATH leads to are left.
      expect(out).toContain("ls=[main ws ]");
      expect(out).toContain("tool-ok\n");
      expect(out).toContain("git=0\n" + Bun.version);
    },
  );
});

describe("namespace sandbox: Pencil's own .env", () => {
  test("the install directory's .env files are masked, .env.example is not", () => {
    const install = tempDir("pencil-run-install-");
    writeTree(install, { ".env": "K=1\n", ".env.local": "K=2\n", ".env.example": "K=\n", "index.ts": "" });
    const plan = planHiding({
      realHome: tempDir(),
      pencilHome: tempDir(),
      wsRoot: tempDir(),
      scratchRoot: tempDir(),
      path: "",
      installDir: install,
      env: {},
    });
    expect(plan.secrets).toContain(join(install, ".env"));
    expect(plan.secrets).toContain(join(install, ".env.local"));
    expect(plan.secrets).not.toContain(join(install, ".env.example"));
    expect(plan.secrets).not.toContain(join(install, "index.ts"));
  });

  test.skipIf(!hasNamespace)(
    "a linked checkout kept reachable for its command (npm link under nvm) shows no .env",
    async () => {
      const h = fakeHome();
      const tool = ".nvm/versions/node/v20/lib/node_modules/tool";
      writeTree(h.home, {
        "src/pencil/.env": "GROQ_API_KEY=LINKED-ENV-SECRET\n",
        "src/pencil/.env.example": "GROQ_API_KEY=\n",
        "src/pencil/bin/pencil": "#!/bin/sh\necho pencil-ok\n",
        // A package inside a toolchain kept whole, with a .env of its own.
        [`${tool}/.env`]: "TOOL-ENV-SECRET\n",
        [`${tool}/cli.sh`]: "#!/bin/sh\necho tool-ok\n",
        // An install prefix kept for its bin/ on PATH.
        "tools/acme/.env.local": "ACME-ENV-SECRET\n",
      });
      chmodSync(join(h.home, "src/pencil/bin/pencil"), 0o755);
      chmodSync(join(h.home, tool, "cli.sh"), 0o755);
      symlinkSync(join(h.home, "src/pencil/bin/pencil"), join(h.home, ".nvm/versions/node/v20/bin/pencil"));
      symlinkSync("../lib/node_modules/tool/cli.sh", join(h.home, ".nvm/versions/node/v20/bin/tool"));
      const { run } = setup("namespace", {}, h.options);
      const out = after(
        await run(
          `pencil; tool; cat ${h.home}/src/pencil/.env ${h.home}/${tool}/.env ${h.home}/tools/acme/.env.local; cat ${h.home}/src/pencil/.env.example; echo end`,
        ),
      );
      expect(out).toContain("pencil-ok\ntool-ok\nGROQ_API_KEY=\nend");
      expect(out).not.toContain("LINKED-ENV-SECRET");
      expect(out).not.toContain("TOOL-ENV-SECRET");
      expect(out).not.toContain("ACME-ENV-SECRET");
    },
  );
});

describe("host unix sockets", () => {
  test("hostUnixSockets lists a socket bound by this process", async () => {
    const path = join(tempDir(), "host.sock");
    const server = createServer().listen(path);
    await new Promise((r) => server.once("listening", r));
    try {
      expect(hostUnixSockets()).toContain(path);
    } finally {
      server.close();
    }
  });

  test("planHiding masks every bound socket the covers leave reachable, and only those", () => {
    const home = tempDir();
    const plan = planHiding({
      realHome: home,
      pencilHome: join(home, ".pencil"),
      wsRoot: tempDir(),
      scratchRoot: tempDir(),
      path: "",
      env: {},
      unixSockets: [
        "/usr/pencil-test-nowhere/agent.sock",
        "/srv/pencil-test-nowhere/agent.sock",
        join(home, "in-home.sock"),
        "/run/covered.sock",
      ],
    });
    expect(plan.secrets).toContain("/usr/pencil-test-nowhere/agent.sock");
    // /srv is covered whole, like every top-level directory that is not the system's.
    expect(plan.secrets).not.toContain("/srv/pencil-test-nowhere/agent.sock");
    expect(plan.secrets).not.toContain(join(home, "in-home.sock"));
    expect(plan.secrets).not.toContain("/run/covered.sock");
    for (const p of ["/etc/shadow", "/etc/gshadow", "/etc/ssl/private"]) expect(plan.secrets).toContain(p);
  });
});

describe("secrets hidden everywhere: the command sees only the system's own directories beside what it needs", () => {
  test("the plan covers every top-level directory but the system's, masks top-level files and the .env files below /etc", () => {
    const root = tempDir("pencil-root-");
    writeTree(root, {
      "usr/bin/tool": "x",
      "etc/app/.env": "ETC-SECRET=1\n",
      "etc/app/.env.production": "ETC-SECRET=2\n",
      "etc/app/.env.example": "PLACEHOLDER=\n",
      "srv/app/.env": "SRV-SECRET=1\n",
      "opt/x/y": "y",
      "info.json": "{}",
    });
    symlinkSync("usr/bin", join(root, "bin"));
    const home = tempDir();
    const plan = planHiding({
      realHome: home,
      pencilHome: join(home, ".pencil"),
      wsRoot: tempDir(),
      scratchRoot: tempDir(),
      path: "",
      env: {},
      unixSockets: [],
      root,
      systemDirs: [join(root, "etc")],
    });
    const covered = plan.covers.map((c) => c.path);
    for (const d of ["srv", "opt"]) expect(covered).toContain(join(root, d));
    for (const d of ["usr", "etc", "bin"]) expect(covered).not.toContain(join(root, d));
    expect(plan.secrets).toContain(join(root, "info.json"));
    expect(plan.secrets).toContain(join(root, "etc/app/.env"));
    expect(plan.secrets).toContain(join(root, "etc/app/.env.production"));
    expect(plan.secrets).not.toContain(join(root, "etc/app/.env.example"));
    expect(SYSTEM_TOPS.has("srv")).toBe(false);
  });

  // Needs a directory of its own at the top of the real file system (root), and the namespace.
  const canPlace = hasNamespace && process.getuid?.() === 0;
  if (hasNamespace && !canPlace)
    console.warn(`${testFileName()}: SKIPPED the /srv and /etc .env test: it places files there and needs root.`);
  test.skipIf(!canPlace)(
    "a command cannot read .env files of other projects (/srv/app/.env) nor below /etc or /usr/local; it still sees /usr and /etc",
    async () => {
      const srv = join("/srv", `pencil-test-${process.pid}`);
      const etc = join("/etc", `pencil-test-${process.pid}`);
      const local = join("/usr/local/lib", `pencil-test-${process.pid}`);
      try {
        writeTree(srv, { ".env": "SRV-SECRET=1\n", "notes.txt": "SRV-NOTES\n" });
        writeTree(etc, { ".env.local": "ETC-SECRET=1\n", "app.conf": "ETC-CONF-VISIBLE\n" });
        writeTree(local, { "pkg/.env": "LOCAL-SECRET=1\n", "pkg/index.js": "LOCAL-CODE-VISIBLE\n" });
        const { run } = setup("namespace");
        const out = after(
          await run(
            `cat ${srv}/.env ${srv}/notes.txt ${etc}/.env.local ${etc}/app.conf ${local}/pkg/.env ${local}/pkg/index.js; ls /usr/bin/env`,
          ),
        );
        expect(out).not.toContain("SRV-SECRET");
        expect(out).not.toContain("SRV-NOTES");
        expect(out).not.toContain("ETC-SECRET");
        expect(out).not.toContain("LOCAL-SECRET");
        expect(out).toContain("LOCAL-CODE-VISIBLE");
        expect(out).toContain("ETC-CONF-VISIBLE");
        expect(out).toContain("/usr/bin/env");
      } finally {
        rmSync(srv, { recursive: true, force: true });
        rmSync(etc, { recursive: true, force: true });
        rmSync(local, { recursive: true, force: true });
      }
    },
  );
});
