import { describe, expect, test } from "bun:test";
import { pidsRunning } from "../support/processes.ts";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { commandEnv, looksSecret, namesHostSocket } from "../../core/sandbox/command-env.ts";
import { createRunCommandTool, useOverlay } from "../../tools/run-command.ts";
import { writeTree } from "../support/temp.ts";
import { toolContext } from "../support/tool-context.ts";
import {
  after,
  dec,
  fakeHome,
  hasGit,
  hasNamespace,
  RUNTIME_ENV,
  SANDBOX_MODES,
  setup,
  tempDir,
} from "../support/run-command-world.ts";

// run_command on its own: what a command's changes become, what it sees, its limits, in each sandbox.

for (const sandbox of SANDBOX_MODES)
  describe.skipIf(sandbox === "namespace" && !hasNamespace)(`run_command (${sandbox})`, () => {
    test("creates, modifies and deletes come back staged; the disk is untouched; the scratch dir is removed when the run ends", async () => {
      const { root, run, overlay, scratchParent, close } = setup(sandbox);
      const out = await run("echo new > src/new.ts && echo 'export const a = 2;' > src/app.ts && rm README.md");
      expect(out).toContain("Exit code 0");
      expect(out).toContain("Staged create: src/new.ts");
      expect(out).toContain("Staged edit: src/app.ts");
      expect(out).toContain("Staged delete: README.md");
      expect(dec(overlay.readBytes(join(root, "src/new.ts")))).toBe("new\n");
      expect(dec(overlay.readBytes(join(root, "src/app.ts")))).toBe("export const a = 2;\n");
      expect(overlay.stat(join(root, "README.md"))).toBeNull();
      expect(existsSync(join(root, "src/new.ts"))).toBe(false);
      expect(readFileSync(join(root, "src/app.ts"), "utf8")).toBe("export const a = 1;\n");
      expect(readFileSync(join(root, "README.md"), "utf8")).toBe("hello\n");
      expect(overlay.list().every((e) => e.origins[0]?.tool === "run_command")).toBe(true);
      await close();
      expect(readdirSync(scratchParent)).toEqual([]);
    });

    test("the write cap: a file past it fails with File too large, and the answer names the cap and the setting", async () => {
      const root = tempDir("pencil-run-ws-");
      writeTree(root, { "a.txt": "a\n" });
      const t = toolContext(root, { limits: { scratchWriteBytes: 1024 * 1024 } });
      const tool = createRunCommandTool({
        sandbox,
        scratchParent: tempDir("pencil-run-parent-"),
        parentEnv: RUNTIME_ENV,
      });
      const out = await t.run(tool, { command: "head -c 3000000 /dev/zero > big.bin; echo rc=$?; wc -c < big.bin" });
      expect(out).toMatch(/File too large|File size limit exceeded/);
      expect(out).toContain("\n1048576\n");
      // The per-file limit answers one big file; the watcher of the total, which reads a little over the
      // cap for that writer (whole pages), leaves it be and the command runs to its end.
      expect(out).toMatch(/may exceed 1\.0 MB[^\n]*\(limits\.scratchWriteBytes in the user's settings\)/);
      expect(out).not.toContain("wrote more than");
    });

    test("the write cap: many files past it in all, and the command is killed with nothing staged", async () => {
      const { run, overlay } = setup(sandbox, {}, { writeCapBytes: 1024 * 1024 });
      const out = await run(
        "for i in $(seq 1 100); do head -c 100000 /dev/zero > f$i.bin; done; sleep 30; echo SURVIVED",
      );
      expect(out).toContain(
        "it wrote more than 1.0 MB to files, the cap on what one command may write (limits.scratchWriteBytes",
      );
      expect(out).toContain("nothing was staged");
      expect(after(out)).not.toContain("SURVIVED");
      expect(overlay.list()).toEqual([]);
    });

    test("staged content and staged deletions are what the command sees", async () => {
      const { root, run, overlay } = setup(sandbox);
      overlay.writeBytes(join(root, "src/app.ts"), new TextEncoder().encode("export const a = 'staged';\n"));
      overlay.writeBytes(join(root, "src/only-staged.ts"), new TextEncoder().encode("fresh\n"), { mode: 0o755 });
      overlay.remove(join(root, "README.md"));
      const out = await run(
        "cat src/app.ts src/only-staged.ts; test -x src/only-staged.ts && echo executable; test -e README.md || echo readme-gone",
      );
      expect(out).toContain("export const a = 'staged';\nfresh\nexecutable\nreadme-gone");
      expect(out).toContain("No file changes.");
      // Touching a file, or rewriting it with the same bytes, is no change.
      const again = await run(
        'touch src/app.ts && cp src/only-staged.ts "$TMPDIR/same" && cat "$TMPDIR/same" > src/only-staged.ts',
      );
      expect(again).toContain("Exit code 0");
      expect(again).toContain("No file changes.");
    });

    test("secrets stay out: .env files, policy-denied paths and secret environment variables", async () => {
      const { run } = setup(sandbox, {
        ".env": "GROQ_API_KEY=from-file\n",
        ".env.example": "GROQ_API_KEY=\n",
        "private/key.pem": "PRIVATE\n",
      });
      process.env.GROQ_API_KEY = "from-parent-env";
      process.env.PENCIL_TEST_TOKEN = "tok";
      try {
        const out = await run(
          'cat .env; cat private/key.pem; cat .env.example; echo "key=[$GROQ_API_KEY] tok=[$PENCIL_TEST_TOKEN]"; env',
        );
        expect(out).toContain(".env: No such file or directory");
        expect(out).toContain("private/key.pem: No such file or directory");
        expect(out).toContain("GROQ_API_KEY=\n");
        expect(out).toContain("key=[] tok=[]");
        expect(out).not.toContain("from-file");
        expect(out).not.toContain("from-parent-env");
        expect(out).not.toContain("PRIVATE");
        expect(out).toContain("2 entries that the policy keeps private");
      } finally {
        delete process.env.GROQ_API_KEY;
        delete process.env.PENCIL_TEST_TOKEN;
      }
    });

    test("a timeout kills the whole process group, reports it, stages nothing and cleans up", async () => {
      const { root, run, overlay, scratchParent, close } = setup(sandbox, {}, { timeoutMs: 400 });
      // The process's first command searches the toolchains on PATH for secrets (seconds on a loaded machine): not timed.
      await run("true");
      const started = performance.now();
      const out = await run("(sleep 30; echo late > late.txt) & echo started; echo early > early.txt; sleep 30");
      expect(performance.now() - started).toBeLessThan(3000);
      expect(out).toContain("Timed out after");
      expect(out).toContain("started");
      expect(out).toContain("nothing was staged");
      expect(overlay.list()).toEqual([]);
      expect(existsSync(join(root, "early.txt"))).toBe(false);
      // A kept scratch forgets what the timed-out command wrote: the next command does not see it.
      expect(after(await run("test -e early.txt || echo no-early"))).toContain("no-early");
      await close();
      expect(readdirSync(scratchParent)).toEqual([]);
    });

    test("background processes do not outlive the command", async () => {
      const { run } = setup(sandbox);
      const out = await run(`sleep 300.${sandbox.length} & echo bg=$!`);
      const pid = Number(/bg=(\d+)/.exec(out)?.[1]);
      expect(pid).toBeGreaterThan(0);
      await Bun.sleep(50);
      // Found by its command line (a namespace pid means nothing out here); a zombie has none: either way no longer running.
      expect(pidsRunning(["sleep", `300.${sandbox.length}`])).toEqual([]);
    });

    test("output is capped to its tail and says how much was cut", async () => {
      const { run } = setup(sandbox, {}, { outputCapBytes: 1000 });
      const out = await run("for i in $(seq 1 5000); do echo line-$i; done; echo LAST >&2");
      expect(out).toMatch(/Output \(the last 1000 B of [\d.]+ KB; the first [\d.]+ KB were cut\):/);
      expect(out).toContain("line-5000\nLAST");
      expect(out).not.toContain("line-1\n");
    });

    test("a binary file comes back byte-identical and a chmod +x is staged as a mode change", async () => {
      const bytes = new Uint8Array(70_000).map((_, i) => (i * 7919) % 256);
      const { root, run, overlay } = setup(sandbox, { "run.sh": "#!/bin/sh\necho hi\n", "blob.bin": bytes });
      chmodSync(join(root, "run.sh"), 0o644);
      const out = await run("cp blob.bin data.bin && chmod +x run.sh");
      expect(out).toContain("Staged create: data.bin");
      expect(out).toContain("Staged edit: run.sh (mode 644 → 755)");
      expect(Buffer.compare(Buffer.from(overlay.readBytes(join(root, "data.bin"))), Buffer.from(bytes))).toBe(0);
      const entry = overlay.list().find((e) => e.real === join(root, "run.sh"))!;
      expect(entry.after?.mode).toBe(0o755);
      expect(statSync(join(root, "run.sh")).mode & 0o777).toBe(0o644);
    });

    test("ignored files, .env writes and refused paths are listed as not staged, with the reason", async () => {
      const { root, run, overlay, ctx, scratchParent } = setup(sandbox, { ".gitignore": "dist/\n*.log\n" });
      (ctx as typeof ctx & { writeRefusal?: (real: string) => string | null }).writeRefusal = (real) =>
        real.endsWith("/generated.ts") ? "Denied by the rule Edit(**/generated.ts)." : null;
      const out = await run(
        "mkdir -p dist && echo b > dist/bundle.js && echo x > debug.log && echo S=1 > .env && echo g > src/generated.ts && ln -s src link && echo ok > ok.txt",
      );
      if (sandbox === "namespace" && useOverlay(root, { scratchParent })) {
        // Copy-on-write: ignored files are the run's own, counted, kept for its later commands.
        expect(out).toContain(
          "Not staged: 2 changes in ignored files (dependencies, build output: debug.log, dist/bundle.js)",
        );
        expect(after(await run("cat dist/bundle.js debug.log"))).toContain("b\nx\n");
      } else {
        expect(out).toContain("Not staged: dist/bundle.js, because .gitignore ignores it");
        expect(out).toContain("Not staged: debug.log, because .gitignore ignores it");
      }
      expect(out).toContain("Not staged: .env, because Writing .env files is never allowed");
      expect(out).toContain("Not staged: src/generated.ts, because Denied by the rule Edit(**/generated.ts).");
      expect(out).toContain("Not staged: link, because symbolic links are not staged");
      expect(out).toContain("Staged create: ok.txt");
      expect(overlay.list().map((e) => e.real)).toEqual([join(root, "ok.txt")]);
    });

    test("files over the per-file cap are not staged", async () => {
      const root = tempDir("pencil-run-ws-");
      const t = toolContext(root, { limits: { maxFileBytes: 100 } });
      const tool = createRunCommandTool({ sandbox });
      const out = await t.run(tool, { command: "head -c 500 /dev/zero > big.bin && echo small > small.txt" });
      expect(out).toContain("Not staged: big.bin, because it is 500 bytes, over the 100-byte limit per file.");
      expect(out).toContain("Staged create: small.txt");
    });

    test.skipIf(!hasGit)("git works on the copy and never writes the real repository", async () => {
      const { root, run } = setup(sandbox);
      const git = (...args: string[]) =>
        spawnSync("git", ["-C", root, "-c", "user.email=t@e", "-c", "user.name=t", ...args], { encoding: "utf8" });
      git("init", "-q");
      git("add", "-A");
      git("commit", "-qm", "init");
      const head = git("rev-parse", "HEAD").stdout;
      const objects = git("count-objects").stdout;
      const out = await run(
        "echo more >> README.md && git status --short && git add -A && git -c user.email=t@e -c user.name=t commit -qm two && git log --oneline | wc -l",
      );
      expect(out).toContain(" M README.md");
      expect(out).toMatch(/\n2\n/);
      expect(out).toContain("Staged edit: README.md");
      expect(out).toMatch(/Not staged: \d+ changes inside \.git/);
      expect(git("rev-parse", "HEAD").stdout).toBe(head);
      expect(git("count-objects").stdout).toBe(objects);
      expect(git("status", "--short").stdout).toBe("");
    });

    test.skipIf(!hasGit)(
      "git inside a command: the owner's identity, the repository's config without credentials or programs, no hooks",
      async () => {
        const { root, run, overlay } = setup(sandbox, { ".hooks/pre-commit": "#!/bin/sh\necho ran > hook-ran\n" });
        chmodSync(join(root, ".hooks/pre-commit"), 0o755);
        // The owner's identity comes from a file the repository's config includes, outside the workspace.
        const identity = join(tempDir("pencil-run-id-"), "identity.inc");
        writeFileSync(
          identity,
          "[user]\n\tname = Owner Person\n\temail = owner@example.com\n\ttoken = SECRET-INCLUDED\n",
        );
        const git = (...args: string[]) =>
          spawnSync("git", ["-C", root, ...args], {
            encoding: "utf8",
            env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" },
          });
        git("init", "-q", "-b", "main");
        git("-c", "user.email=t@e", "-c", "user.name=t", "add", "-A");
        git("-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "init");
        writeFileSync(join(root, ".git/hooks/pre-commit"), "#!/bin/sh\necho ran > hook-ran-too\n");
        chmodSync(join(root, ".git/hooks/pre-commit"), 0o755);
        writeFileSync(
          join(root, ".git/config"),
          readFileSync(join(root, ".git/config"), "utf8") +
            [
              '[remote "origin"]',
              "\turl = https://owner:SECRET-PASSWORD@git.example/x.git",
              "\tfetch = +refs/heads/*:refs/remotes/origin/*",
              '[branch "main"]',
              "\tremote = origin",
              "\tmerge = refs/heads/main",
              "[http]",
              "\textraHeader = Authorization: Bearer SECRET-HEADER",
              "[credential]",
              "\thelper = store --file /nowhere/SECRET-HELPER",
              "[core]",
              '\tfsmonitor = "echo SECRET-FSMONITOR"',
              "\thooksPath = .hooks",
              "[include]",
              `\tpath = ${identity}`,
              "",
            ].join("\n"),
        );
        const out = await run(
          "cat .git/config; git config --list; echo more >> README.md && git commit -qam two && git log -1 --format='%an <%ae> | %cn <%ce>'; git remote get-url origin; git log --oneline | wc -l",
        );
        expect(out).not.toContain("SECRET-");
        expect(out).toContain("Owner Person <owner@example.com> | Owner Person <owner@example.com>");
        expect(out).toContain("https://git.example/x.git");
        expect(out).toContain("branch.main.merge=refs/heads/main");
        expect(out).toMatch(/\n2\n/);
        // No hook ran (neither the repository's own nor its hooksPath's); the command's edit is staged, its commit is not.
        expect(out).toContain("Staged edit: README.md");
        expect(out).not.toContain("hook-ran");
        expect(overlay.list().map((e) => e.real.slice(root.length + 1))).toEqual(["README.md"]);
        expect(git("log", "--oneline").stdout.trim().split("\n")).toHaveLength(1);
        expect(readFileSync(join(root, ".git/config"), "utf8")).toContain("SECRET-PASSWORD");
      },
    );

    test("links inside the workspace lead into the copy: a write through them is staged, not made", async () => {
      const { root, run, overlay } = setup(sandbox, { "packages/lib/index.js": "lib v1\n" });
      symlinkSync(join(root, "src/app.ts"), join(root, "alias.ts"));
      mkdirSync(join(root, "node_modules/@me"), { recursive: true });
      symlinkSync("../../packages/lib", join(root, "node_modules/@me/lib"));
      writeFileSync(join(root, "node_modules/dep.js"), "dep\n");
      overlay.writeBytes(join(root, "packages/lib/index.js"), new TextEncoder().encode("lib staged\n"));
      const out = await run(
        "cat node_modules/@me/lib/index.js && echo through-link > alias.ts && echo via-modules > node_modules/@me/lib/new.js",
      );
      expect(out).toContain("lib staged");
      expect(out).toContain("Staged edit: src/app.ts");
      expect(out).toContain("Staged create: packages/lib/new.js");
      expect(out).not.toContain("WARNING");
      expect(readFileSync(join(root, "src/app.ts"), "utf8")).toBe("export const a = 1;\n");
      expect(existsSync(join(root, "packages/lib/new.js"))).toBe(false);
    });

    test("an abort kills the command and stages nothing", async () => {
      const { run, ctx, overlay } = setup(sandbox);
      const controller = new AbortController();
      ctx.signal = controller.signal;
      setTimeout(() => controller.abort(), 200);
      const started = performance.now();
      const out = await run("echo x > x.txt; sleep 30");
      // Far below the 30 s the command would sleep: it was killed, however loaded the machine.
      expect(performance.now() - started).toBeLessThan(20_000);
      expect(out).toContain("Cancelled after");
      expect(overlay.list()).toEqual([]);
    });
  });

describe("shared dependency directories", () => {
  const files = { "node_modules/pkg/index.js": "module.exports = 1;\n", "node_modules/pkg/.env": "LEAK=1\n" };

  test.skipIf(!hasNamespace)(
    "namespace, copy: readable, writes refused, the real directory and workspace untouched",
    async () => {
      const { root, run } = setup("namespace", files, { scratch: "copy" });
      const before = readdirSync(join(root, "node_modules/pkg")).sort();
      const outside = tempDir();
      const out = await run(
        `cat node_modules/pkg/index.js; cat node_modules/pkg/.env; echo x > node_modules/pkg/new.js; echo y >> node_modules/pkg/index.js; touch '${root}/escape.txt'; touch '${outside}/out.txt'; pwd`,
      );
      expect(out).toContain("module.exports = 1;");
      expect(out).not.toContain("LEAK");
      expect(out).toContain("node_modules/pkg/new.js: Read-only file system");
      expect(out).toContain(`\n${root}\n`);
      expect(readdirSync(join(root, "node_modules/pkg")).sort()).toEqual(before);
      expect(readFileSync(join(root, "node_modules/pkg/index.js"), "utf8")).toBe("module.exports = 1;\n");
      // The absolute path of the workspace leads into the copy: the write there was staged, not made.
      expect(existsSync(join(root, "escape.txt"))).toBe(false);
      expect(out).toContain("Staged create: escape.txt");
      // Outside the workspace the host's /tmp is covered by a private one, and the rest sealed read-only.
      expect(out).toContain(`${outside}/out.txt': No such file or directory`);
      expect(existsSync(join(outside, "out.txt"))).toBe(false);
    },
  );

  test("plain: readable and secrets below it left out; a write through a link is detected and reported loudly", async () => {
    const { root, run, overlay } = setup("plain", { ...files, "node_modules/other/x.js": "x\n" });
    // node_modules holds a hidden file, so it is rebuilt around it: pkg's entries are linked one by one, other/ as a whole.
    const out = await run(
      "cat node_modules/pkg/index.js; cat node_modules/pkg/.env; echo a > node_modules/pkg/new.js; echo b > node_modules/other/leak.js",
    );
    expect(out).toContain("module.exports = 1;");
    expect(out).toContain("node_modules/pkg/.env: No such file or directory");
    expect(out).not.toContain("LEAK");
    expect(existsSync(join(root, "node_modules/pkg/new.js"))).toBe(false);
    expect(out).toContain("Not staged: node_modules/pkg/new.js, because it is inside node_modules");
    expect(out).toContain("WARNING: the command changed");
    expect(out).toContain("create: node_modules/other/leak.js");
    expect(out).not.toContain("create: node_modules/pkg/new.js");
    expect(overlay.list()).toEqual([]);
  });
});

describe("environment and tool shape", () => {
  test("the owner's variables pass, with HOME and TMPDIR in the scratch copy; secret-looking ones and extras are dropped", () => {
    const env = commandEnv(
      {
        PATH: "/bin",
        LANG: "en_US.UTF-8",
        GROQ_API_KEY: "k",
        TELEGRAM_BOT_TOKEN: "t",
        INSFORGE_ANON_KEY: "i",
        AWS_SECRET_ACCESS_KEY: "a",
        USER: "me",
        EDITOR: "vim",
      },
      { home: "/s/home", tmp: "/s/tmp" },
      {
        FOO: "1",
        DB_PASSWORD: "p",
        MY_AUTH: "a",
        NODE_ENV: "test",
        SSH_AUTH_SOCK: "/tmp/ssh-x/agent.1",
        DISPLAY: ":0",
        DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/1/bus",
        DOCKER_HOST: "unix:///run/docker.sock",
        XDG_RUNTIME_DIR: "/run/user/1",
        TMUX: "/tmp/tmux-1/default,1,0",
      },
    );
    expect(env).toMatchObject({
      PATH: "/bin",
      HOME: "/s/home",
      TMPDIR: "/s/tmp",
      LANG: "en_US.UTF-8",
      USER: "me",
      EDITOR: "vim",
      FOO: "1",
      NODE_ENV: "test",
    });
    for (const name of [
      "GROQ_API_KEY",
      "TELEGRAM_BOT_TOKEN",
      "INSFORGE_ANON_KEY",
      "AWS_SECRET_ACCESS_KEY",
      "DB_PASSWORD",
      "MY_AUTH",
    ])
      expect(env[name]).toBeUndefined();
    // Nothing the owner did not have is forced on the command's programs.
    for (const name of ["TERM", "CI", "NO_COLOR"]) expect(env[name]).toBeUndefined();
    // Variables that lead to host services' sockets: through them a command could act outside any sandbox.
    for (const name of [
      "SSH_AUTH_SOCK",
      "DISPLAY",
      "DBUS_SESSION_BUS_ADDRESS",
      "DOCKER_HOST",
      "XDG_RUNTIME_DIR",
      "TMUX",
    ])
      expect(env[name]).toBeUndefined();
    expect(namesHostSocket("GPG_AGENT_INFO")).toBe(true);
    expect(namesHostSocket("WAYLAND_DISPLAY")).toBe(true);
    expect(namesHostSocket("MY_SERVICE_SOCKET")).toBe(true);
    expect(namesHostSocket("NODE_ENV")).toBe(false);
    expect(looksSecret("OPENROUTER_API_KEY")).toBe(true);
    expect(looksSecret("TELEGRAM_OWNER_ID")).toBe(true);
    expect(looksSecret("GITHUB_TOKEN")).toBe(true);
    expect(looksSecret("PATH")).toBe(false);
  });

  test("the policy seam sees the command; no path claims; an empty command is refused with a hint", async () => {
    const tool = createRunCommandTool({ sandbox: "plain" });
    expect(tool.runCommand!({ command: "bun test" })).toBe("bun test");
    expect(tool.claims({ command: "rm -rf /" })).toEqual([]);
    const { ctx } = toolContext(tempDir());
    await expect(tool.execute({ command: "   " }, ctx)).rejects.toThrow(/empty.*bun test/);
  });
});

for (const sandbox of SANDBOX_MODES)
  describe.skipIf(sandbox === "namespace" && !hasNamespace)(
    `a workspace that is the home directory (${sandbox})`,
    () => {
      test("its credentials and Pencil's state are not copied into the scratch", async () => {
        const h = fakeHome();
        const t = toolContext(h.home, { home: h.home });
        const tool = createRunCommandTool({
          sandbox,
          scratchParent: tempDir(),
          ...h.options,
          pencilHome: join(h.home, ".pencil"),
        });
        // HOME_CREDENTIALS come from the policy: its newer entries (.pgpass, .vault-token) are left out as well.
        writeTree(h.home, { ".pgpass": "db:5432:*:me:PGPASS-SECRET\n", ".vault-token": "VAULT-SECRET\n" });
        const out = await t.run(tool, {
          command:
            "cat .ssh/id_rsa .netrc .config/gh/hosts.yml .pencil/changesets/c1.json .pgpass .vault-token; cat notes.txt; ls -A",
        });
        expect(out).toContain("HOME-NOTES");
        for (const secret of [
          "FAKE-SSH-KEY",
          "NETRC-SECRET",
          "GH-SECRET",
          "PENCIL-STATE",
          "PGPASS-SECRET",
          "VAULT-SECRET",
        ])
          expect(out).not.toContain(secret);
        expect(out).toContain(".ssh/id_rsa: No such file or directory");
      });
    },
  );
