import { describe, expect, test } from "bun:test";
import { pidsRunning } from "../support/processes.ts";
import { testFileName } from "../support/run-command-world.ts";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startCommandProxy } from "../../net/command-proxy.ts";
import { VERSION_MANAGERS } from "../../core/sandbox/version-managers.ts";
import {
  after,
  dec,
  fakeHome,
  hasNamespace,
  made,
  RUNTIME_PATH,
  setup,
  tempDir,
} from "../support/run-command-world.ts";

// What a sandboxed command cannot do: undo the sandbox, reach the network or the host's loopback, share memory
// with the host, or leave a process behind.

/** What a command tries in order to undo the sandbox; every line that works prints an ESCAPE marker. */
const ESCAPE =
  "grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; " +
  'umount -l "$PWD" 2>/dev/null && echo ESCAPE-umount; mount -o remount,bind,rw / 2>/dev/null && echo ESCAPE-remount; ' +
  "unshare -U -r true 2>/dev/null && echo ESCAPE-userns; unshare -U true 2>/dev/null && echo ESCAPE-userns-unmapped; " +
  "for p in / /etc /usr /proc/sys/kernel/domainname /proc/sysrq-trigger /sys/kernel /dev; do test -w $p && echo ESCAPE-writable-$p; done; " +
  // The reviewer's reproduction: lazily unmount the copy and the covers, remount / read-write, write the real file.
  'R=$PWD; H=$(dirname "$R"); cd /; for i in 1 2 3 4 5 6; do umount -l "$R"; umount -l "$H"; done 2>/dev/null; mount -o remount,bind,rw / 2>/dev/null; echo PWNED > "$R/a.txt"; echo tried';

/** Checks ESCAPE's output and that the real file is untouched (the write landed in the copy and came back staged). */
function expectNoEscape(text: string, realFile: string) {
  const out = after(text);
  expect(out).toContain("CapEff:\t0000000000000000");
  expect(out).toContain("CapBnd:\t0000000000000000");
  expect(out).toContain("NoNewPrivs:\t1");
  expect(out).toContain("tried");
  expect(out).not.toContain("ESCAPE");
  expect(readFileSync(realFile, "utf8")).toBe("original\n");
  expect(out).toContain("Staged edit: a.txt");
}

describe("namespace sandbox: the command cannot undo it", () => {
  test.skipIf(!hasNamespace)(
    "no capabilities: umount, remount and nested user namespaces fail; the real workspace stays untouched",
    async () => {
      const { root, run } = setup("namespace", { "a.txt": "original\n" });
      expectNoEscape(await run(ESCAPE), join(root, "a.txt"));
    },
  );

  test.skipIf(!hasNamespace)(
    "every mount the command reaches is read-only but the workspace path, the scratch and the private temporary space; masks are empty and read-only",
    async () => {
      const { root, run, scratchParent } = setup("namespace");
      const out = await run(
        'while read -r _ _ _ _ mp _; do if [ -w "$mp" ] && [ ! -c "$mp" ]; then echo "W:$mp"; fi; done < /proc/self/mountinfo; ' +
          'for f in /etc/shadow /etc/gshadow; do if [ -e "$f" ]; then echo "size:$(stat -c %s "$f")"; : > "$f" 2>/dev/null || echo "refused:$f"; fi; done',
      );
      const writable = [...out.matchAll(/^W:(.*)$/gm)].map((m) => m[1]!);
      const allowed = (p: string) =>
        p === root || ["/tmp", "/var/tmp", "/dev/shm"].includes(p) || p.startsWith(`${realpathSync(scratchParent)}/`);
      expect(writable.filter((p) => !allowed(p))).toEqual([]);
      expect(writable).toContain(root);
      // /etc/shadow is masked by an empty file: nothing to read, and a write is refused, not swallowed.
      if (out.includes("size:")) {
        expect(out).not.toMatch(/size:[1-9]/);
        expect(out).toContain("refused:/etc/shadow");
      }
    },
  );

  const asRoot = hasNamespace && process.getuid?.() === 0 && spawnSync("setpriv", ["--version"]).status === 0;
  // The child runs this checkout's code and Bun as nobody: a checkout in a private directory (a 0700 home, mktemp -d) is out of its reach.
  const nobodyReads =
    asRoot &&
    spawnSync("setpriv", [
      "--reuid",
      "65534",
      "--regid",
      "65534",
      "--clear-groups",
      "sh",
      "-c",
      'test -r "$1" && test -x "$2"',
      "probe",
      join(join(import.meta.dir, ".."), "../tools/run-command.ts"),
      process.execPath,
    ]).status === 0;
  if (asRoot && !nobodyReads)
    console.warn(
      `${testFileName()}: SKIPPED the unprivileged-user escape test: uid 65534 cannot read this checkout (${join(join(import.meta.dir, ".."), "..")}) or run its Bun; clone it into a world-readable directory to run it.`,
    );
  // Whether uid 65534 may make the namespaces itself: asked of the sandbox's own check, run as nobody, before the test.
  const nobodyNamespaces =
    asRoot &&
    nobodyReads &&
    spawnSync(
      "setpriv",
      [
        "--reuid",
        "65534",
        "--regid",
        "65534",
        "--clear-groups",
        process.execPath,
        "-e",
        `import { sandboxAvailable } from ${JSON.stringify(join(join(import.meta.dir, ".."), "../core/sandbox/namespace.ts"))}; process.exit(sandboxAvailable() ? 0 : 3);`,
      ],
      { env: { PATH: process.env.PATH, HOME: tmpdir() }, timeout: 10_000 },
    ).status === 0;
  if (asRoot && nobodyReads && !nobodyNamespaces)
    console.warn(
      `${testFileName()}: SKIPPED the unprivileged-user escape test: uid 65534 cannot make user namespaces here.`,
    );
  const asNobody = asRoot && nobodyReads && nobodyNamespaces;
  test.skipIf(!asNobody)("the same as an unprivileged user (mapped to root inside the namespace)", () => {
    // A world-accessible directory: the child runs as nobody and makes its workspace and scratch copies there.
    const dir = mkdtempSync(join(tmpdir(), "pencil-run-nobody-"));
    made.push(dir);
    chmodSync(dir, 0o1777);
    const child = join(dir, "child.ts");
    writeFileSync(
      child,
      `import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sandboxAvailable } from ${JSON.stringify(join(join(import.meta.dir, ".."), "../core/sandbox/namespace.ts"))};
import { createRunCommandTool } from ${JSON.stringify(join(join(import.meta.dir, ".."), "../tools/run-command.ts"))};
import { toolContext } from ${JSON.stringify(join(join(import.meta.dir, ".."), "support/tool-context.ts"))};
const dir = process.argv[2]!;
const ws = join(dir, "ws");
mkdirSync(ws);
writeFileSync(join(ws, "a.txt"), "original\\n");
if (!sandboxAvailable()) { console.log(JSON.stringify({ unavailable: true })); process.exit(0); }
const t = toolContext(ws, { home: join(dir, "home") });
const tool = createRunCommandTool({ sandbox: "namespace", scratchParent: dir, realHome: join(dir, "home"), pencilHome: join(dir, "ph") });
console.log(JSON.stringify({ uid: process.getuid(), out: await t.run(tool, { command: process.argv[3]! }) }));
`,
    );
    chmodSync(child, 0o644);
    mkdirSync(join(dir, "home"), { mode: 0o777 });
    chmodSync(join(dir, "home"), 0o777);
    const r = spawnSync(
      "setpriv",
      ["--reuid", "65534", "--regid", "65534", "--clear-groups", process.execPath, child, dir, ESCAPE],
      {
        encoding: "utf8",
        env: { PATH: process.env.PATH, HOME: join(dir, "home") },
        timeout: 10_000,
      },
    );
    expect(r.stderr).toBe("");
    const result = JSON.parse(r.stdout) as { uid?: number; out?: string; unavailable?: boolean };
    // Namespaces were there for uid 65534 when the file started: a child that finds none now has checked nothing.
    expect(result.unavailable).toBeUndefined();
    expect(result.uid).toBe(65534);
    expectNoEscape(result.out!, join(dir, "ws", "a.txt"));
  });
});

describe("namespace sandbox: network, host sockets and shared memory", () => {
  test.skipIf(!hasNamespace)(
    "no network by default (the private loopback works); `network: true` opens no direct way out either",
    async () => {
      const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("from-host") });
      try {
        const probe =
          `(echo hi > /dev/tcp/127.0.0.1/${server.port}) 2>/dev/null && echo HOST-REACHED || echo HOST-UNREACHABLE; ` +
          `"${process.execPath}" -e 'const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("inside") }); console.log("own loopback:", await (await fetch("http://127.0.0.1:" + s.port)).text()); s.stop(true)'`;
        const closed = after(
          await setup("namespace").run(
            `${probe}; getent hosts example.com || echo "curl: (6) Could not resolve host: example.com"`,
          ),
        );
        expect(closed).toContain("HOST-UNREACHABLE");
        expect(closed).toContain("could not resolve: example.com (no network to ask)");
        expect(closed).toContain('"sandbox": {"network": true}');
        expect(closed).toContain("own loopback: inside");
        // With the network on, still no direct way out: the host's loopback stays out of reach (the proxy is the only door).
        const open = after(await setup("namespace", {}, { network: true, startProxy: startCommandProxy }).run(probe));
        expect(open).toContain("HOST-UNREACHABLE");
        expect(open).toContain("own loopback: inside");
      } finally {
        server.stop(true);
      }
    },
  );

  test.skipIf(!hasNamespace)(
    "the ssh-agent socket is out of reach, even in a directory the sandbox keeps; the variable is not passed",
    async () => {
      const h = fakeHome();
      // In the kept toolchain directory: only the SSH_AUTH_SOCK mask hides it.
      const sock = join(h.home, ".nvm", "agent", "s.sock");
      mkdirSync(dirname(sock));
      let accepted = 0;
      const listener = Bun.listen({ unix: sock, socket: { open: () => void accepted++, data: () => {} } });
      try {
        const options = {
          ...h.options,
          parentEnv: { ...h.options.parentEnv, SSH_AUTH_SOCK: sock },
          extraEnv: { SSH_AUTH_SOCK: sock },
        };
        const { run } = setup("namespace", {}, options);
        const out = after(
          await run(
            `echo "var=[$SSH_AUTH_SOCK]"; test -S ${sock} && echo SOCKET-VISIBLE; cat ${h.home}/.nvm/nvm-version.txt; ` +
              `"${process.execPath}" -e 'try { await Bun.connect({ unix: ${JSON.stringify(sock)}, socket: { data() {} } }); console.log("AGENT-REACHED") } catch (e) { console.log("agent unreachable") } process.exit(0)'`,
          ),
        );
        expect(out).toContain("var=[]");
        expect(out).toContain("nvm-ok");
        expect(out).toContain("agent unreachable");
        expect(out).not.toContain("SOCKET-VISIBLE");
        expect(out).not.toContain("AGENT-REACHED");
        expect(accepted).toBe(0);
      } finally {
        listener.stop(true);
      }
    },
  );

  test.skipIf(!hasNamespace)(
    "/dev/shm, /tmp and System V IPC are fresh and private: writes work but neither reach the host nor persist",
    async () => {
      const marker = `pencil-run-test-${process.pid}-${Date.now()}`;
      const hostFile = join(tempDir(), "host.txt");
      writeFileSync(hostFile, "HOST-TMP\n");
      // A shared memory segment of the host (util-linux's ipcmk): the command must not see it.
      const segment = /(\d+)/.exec(spawnSync("ipcmk", ["-M", "4096"], { encoding: "utf8" }).stdout ?? "")?.[1];
      try {
        const { run } = setup("namespace");
        const first = after(
          await run(
            `ls -A /dev/shm /tmp | grep -c ${marker}; echo x > /dev/shm/${marker} && echo x > /tmp/${marker} && echo wrote; cat ${hostFile}; ipcs -m | grep -Eq "^0x[0-9a-f]+ +${segment ?? "none"} " && echo SEGMENT-VISIBLE || echo segment-hidden`,
          ),
        );
        expect(first).toContain("\n0\nwrote\n");
        expect(first).not.toContain("HOST-TMP");
        expect(first).toContain("segment-hidden");
        // Nothing reached the host's: the next run starts from fresh, empty ones again.
        expect(existsSync(`/dev/shm/${marker}`)).toBe(false);
        expect(existsSync(join(tmpdir(), marker))).toBe(false);
      } finally {
        if (segment) spawnSync("ipcrm", ["-m", segment]);
      }
    },
  );
});

describe("namespace sandbox: nothing outlives the command; the diff follows nothing out of the copy", () => {
  test.skipIf(!hasNamespace)(
    "the command starts clean from the setup: no signal ignored or blocked, only stdin, stdout and stderr open, the environment as given",
    async () => {
      const { run } = setup("namespace");
      const out = await run(
        'grep -E "^Sig(Ign|Blk)" /proc/self/status; ls /proc/$$/fd > /tmp/fds; tr "\\n" " " < /tmp/fds; echo; yes | head -1 >/dev/null; echo "pipe=${PIPESTATUS[0]}"; env | cut -d= -f1 | sort | tr "\\n" " "',
      );
      expect(out).toContain("SigBlk:\t0000000000000000");
      expect(out).toContain("SigIgn:\t0000000000000000");
      // Listed by a child while the shell holds no pipe of its own (a pipeline's would race the listing).
      expect(out).toContain("\n0 1 2 \n");
      // A writer into a closed pipe dies of SIGPIPE (141), as outside; an inherited SIG_IGN would make it exit 1.
      expect(out).toContain("pipe=141");
      // The runner's environment exactly: nothing the setup's own runtime read or added (no BUN_*, no .env).
      const names = /\n((?:[A-Z_]+ )+)/
        .exec(out.slice(out.indexOf("pipe=")))?.[1]
        ?.trim()
        .split(" ");
      // Beside the proxy's variables (the network is off: they lead to the refusing proxy) and those of the version
      // managers this machine's PATH leads into (PYENV_ROOT, RUSTUP_HOME…), which depend on the machine.
      const managerVars = new Set(VERSION_MANAGERS.flatMap((m) => (m.variable ? [m.variable] : [])));
      expect(
        names?.filter((n) => !["PWD", "SHLVL", "_"].includes(n) && !/PROXY$/.test(n) && !managerVars.has(n)),
      ).toEqual(["GIT_TERMINAL_PROMPT", "HOME", "LANG", "PATH", "TEMP", "TMP", "TMPDIR"]);
    },
  );

  test.skipIf(!hasNamespace)(
    "a setsid'd survivor is killed with the command, before it can swap a file for a link to a secret",
    async () => {
      const secret = join(tempDir(), "id_rsa");
      writeFileSync(secret, "OUTSIDE-SECRET\n");
      const { root, run, overlay } = setup("namespace");
      const out = await run(`echo data > f; setsid sleep 31.4159 & (sleep 0.3; ln -sf ${secret} f) & echo ok`);
      expect(out).toContain("Staged create: f");
      expect(dec(overlay.readBytes(join(root, "f")))).toBe("data\n");
      // Long after the swap would have happened: neither the survivor nor the swapper ran on.
      await Bun.sleep(400);
      expect(pidsRunning(["sleep", "31.4159"])).toEqual([]);
      expect(overlay.list().some((e) => e.after && dec(e.after.bytes).includes("OUTSIDE-SECRET"))).toBe(false);
    },
  );

  test.skipIf(!hasNamespace)(
    "no terminal, disk or other users' secrets: /dev is private, /etc/shadow and /root are masked",
    async () => {
      const { run } = setup("namespace", {}, { realHome: tempDir() });
      const out = after(
        await run(
          "ls -A /dev/pts | wc -l; (echo x > /dev/pts/ptmx) 2>/dev/null && echo PTS-WRITTEN; ls /dev | tr '\\n' ' '; echo; wc -c < /etc/shadow; ls -A /root | tr '\\n' ' '; echo; echo end",
        ),
      );
      expect(out).not.toContain("PTS-WRITTEN");
      const lines = out.split("\n");
      const at = lines.indexOf("Output:");
      expect(lines[at + 1]).toBe("0");
      const devs = lines[at + 2]!.trim().split(" ");
      for (const d of ["null", "zero", "urandom", "fd", "shm"]) expect(devs).toContain(d);
      for (const d of devs)
        expect([
          "fd",
          "full",
          "null",
          "pts",
          "random",
          "shm",
          "stderr",
          "stdin",
          "stdout",
          "tty",
          "urandom",
          "zero",
        ]).toContain(d);
      // Empty or unreadable, never its content; root's home shows only the toolchains PATH leads into.
      expect(lines[at + 3] === "0" || lines[at + 3]!.includes("Permission denied")).toBe(true);
      const onPath = new Set(
        RUNTIME_PATH.split(":")
          .filter((p) => p.startsWith("/root/"))
          .map((p) => p.split("/")[2]),
      );
      for (const name of lines[at + 4]!.trim().split(" ").filter(Boolean)) expect(onPath.has(name)).toBe(true);
    },
  );
});
