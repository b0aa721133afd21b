// The namespace sandbox's setup: run by Bun as the first process of fresh user, mount, pid, IPC and network namespaces
// (`unshare … bun namespace-setup.ts PLAN.json`), it takes the plan's mount steps by system calls, seals every
// reachable mount read-only but the scratch, the workspace path and the private temporary space, and replaces itself
// with setpriv, which drops every capability before the command starts. Any failure before that exits 97 with a
// `pencil-sandbox:` line: the command never runs half-confined.
import { accessSync, constants, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { closeSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import type { MountStep, SetupPlan } from "./mount-plan.ts";
import { SETUP_FAILED_EXIT, SETUP_MARKER, DROP_PRIVILEGES } from "./setup-contract.ts";

type Lib = typeof import("./libc.ts");

function fail(why: string): never {
  process.stderr.write(`${SETUP_MARKER} ${why}\n`);
  process.exit(SETUP_FAILED_EXIT);
}

/** One line of /proc/self/mountinfo, as the seal needs it. */
interface MountLine {
  id: string;
  point: string;
  options: string[];
  type: string;
}

/** The mount table: the mount point unescaped (mountinfo writes space, tab, newline and backslash as octal). */
function mountTable(): MountLine[] {
  const out: MountLine[] = [];
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    if (line === "") continue;
    const [fields, rest = ""] = line.split(" - ");
    const f = fields!.split(" ");
    out.push({
      id: f[0]!,
      point: f[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8))),
      options: f[5]!.split(","),
      type: rest.split(" ")[0]!,
    });
  }
  return out;
}

/** The per-mount flags a read-only remount must repeat (the kernel refuses to clear locked ones). */
function mountFlags(lib: Lib, options: readonly string[]): number {
  const { MS } = lib;
  const named: Record<string, number> = {
    nosuid: MS.NOSUID,
    nodev: MS.NODEV,
    noexec: MS.NOEXEC,
    noatime: MS.NOATIME,
    nodiratime: MS.NODIRATIME,
    relatime: MS.RELATIME,
    strictatime: MS.STRICTATIME,
    nosymfollow: MS.NOSYMFOLLOW,
  };
  let flags = 0;
  for (const o of options) flags |= named[o] ?? 0;
  return flags;
}

function remountReadOnly(lib: Lib, point: string, options: readonly string[]): string | null {
  const { MS } = lib;
  return lib.mount(null, point, null, MS.REMOUNT | MS.BIND | MS.RDONLY | mountFlags(lib, options), null);
}

/** Makes the mount at `point` (the topmost there) read-only, keeping its other flags. */
function readOnly(lib: Lib, point: string): string | null {
  const m = mountTable().findLast((x) => x.point === point);
  return m ? remountReadOnly(lib, point, m.options) : `no mount at ${point}`;
}

function isInsideOrAt(dir: string, p: string): boolean {
  return p === dir || p.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/** True when `path`'s parent is a directory reached without a link: its real path is itself (plan paths are real). */
function reachedDirectly(path: string): boolean {
  try {
    return realpathSync(dirname(path)) === dirname(path);
  } catch {
    return false; // gone: nothing to remove
  }
}

function setUp(plan: SetupPlan, lib: Lib): never {
  const { MS } = lib;
  const bind = (source: string, target: string, recursive = false) =>
    lib.mount(source, target, null, MS.BIND | (recursive ? MS.REC : 0), null);
  const must = (error: string | null, why: string) => {
    if (error !== null) fail(`${why}: ${error}`);
  };
  const S = plan.scratch;
  const W = plan.dir;
  const R = plan.at;
  const E = plan.empty;
  const inherited = new Set(mountTable().map((m) => m.id));
  // A nested user namespace starts with every capability again: allow none (/proc is sealed read-only below anyway).
  try {
    writeFileSync("/proc/sys/user/max_user_namespaces", "0");
  } catch {
    // not every kernel lets a user namespace lower it; the seal and the dropped capabilities still hold
  }
  // The private network's own loopback (the host's stays out of reach): local test servers keep working.
  lib.loopbackUp();
  must(bind(S, S), "cannot bind the scratch directory");
  // What hides is read-only from the start: an empty directory and an empty file, each bound on itself and made
  // read-only once. A bind copies its source mount's flags, so every mask made from them is read-only already and the
  // seal below has nothing to do for it (there can be hundreds).
  const F = join(S, "empty-file");
  try {
    writeFileSync(F, "", { mode: 0o444, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || statSync(F).size !== 0)
      fail(`cannot make the empty file masks are made from: ${(error as NodeJS.ErrnoException).code}`);
  }
  for (const source of [E, F]) {
    must(bind(source, source), `cannot prepare ${source}`);
    must(readOnly(lib, source), `cannot make ${source} read-only`);
  }

  const binds: string[] = [];
  const deletions: string[] = [];
  const covers: Extract<MountStep, { op: "cover" }>[] = [];
  const keeps: Extract<MountStep, { op: "keep" }>[] = [];
  const points: Extract<MountStep, { op: "mount-point" }>[] = [];
  const secrets: string[] = [];
  const filtered: Extract<MountStep, { op: "filtered" }>[] = [];
  for (const step of plan.steps) {
    switch (step.op) {
      case "overlay":
        // Copy-on-write: the workspace read-only under a private upper layer. userxattr: overlayfs keeps whiteouts and
        // opaque marks in user.* attributes. No redirects followed, no metacopy: nothing written into a layer can make
        // the overlay show what the policy hid. The layers are then covered: the command reaches its upper layer only
        // through the overlay.
        must(
          lib.mount(
            "pencil-scratch",
            step.target,
            "overlay",
            0,
            `userxattr,redirect_dir=nofollow,metacopy=off,lowerdir=${step.lower},upperdir=${step.upper},workdir=${step.work}`,
          ),
          "cannot mount the copy-on-write overlay",
        );
        must(bind(E, step.upper) ?? bind(E, step.work), "cannot cover the overlay's layers");
        break;
      case "whiteout":
        deletions.push(step.path);
        break;
      case "bind":
        must(bind(step.source, step.target), `cannot share ${step.source}`);
        binds.push(step.target);
        if (isInsideOrAt(W, step.target) && step.target !== W) binds.push(join(R, relative(W, step.target)));
        break;
      case "mask":
        must(bind(step.dir ? E : F, step.path), `cannot hide a ${step.dir ? "directory" : "file"}`);
        break;
      case "cover":
        covers.push(step);
        break;
      case "keep":
        keeps.push(step);
        break;
      case "mount-point":
        points.push(step);
        break;
      case "secret":
        secrets.push(step.path);
        break;
      case "filtered":
        filtered.push(step);
        break;
    }
  }
  // The staged deletions and what the policy hides, removed through the overlay (whiteouts in the upper layer) before
  // the command: absent, as from a copy.
  for (const d of deletions) {
    // An earlier command of the run may have left a link in place of a directory above it (an ignored tree is kept):
    // removed through it, the entry would be the host's at the link's target. Nothing of the workspace shows there.
    if (!reachedDirectly(d)) continue;
    try {
      rmSync(d, { recursive: true, force: true });
    } catch (error) {
      fail(`cannot lay the staged deletions and hide what the policy hides: ${(error as Error).message}`);
    }
  }
  must(bind(W, R, true), "cannot place the scratch copy at the workspace path");
  // A /dev of its own: the owner's terminals, disks and consoles stay out of reach (a read-only mount does not stop
  // writes to a device). The host's harmless devices bound onto the empty files prepared in the scratch.
  const dev = join(S, "dev");
  for (const e of readdirSync(dev, { withFileTypes: true })) {
    if (!e.isFile()) continue;
    must(bind(`/dev/${e.name}`, join(dev, e.name)), `cannot provide /dev/${e.name}`);
  }
  must(bind(dev, "/dev", true), "cannot place the private /dev");

  // Everything bound after the first cover is opened before it: a later cover's source may lie under an earlier one.
  const openDir = (p: string, why: string) => {
    try {
      return openSync(p, constants.O_RDONLY);
    } catch (error) {
      return fail(`${why}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
  };
  const keepFds = keeps.map((k) => openDir(k.path, `cannot open ${k.path} to keep it reachable`));
  // The filtered copies lie in the scratch, which a cover (/tmp) may stand over by the time they are bound.
  const filteredFds = filtered.map((f) => openDir(f.source, `cannot open ${f.source}`));
  const coverFds = covers.map((c) => (c.tmpfs ? -1 : openDir(c.source, `cannot open ${c.source}`)));
  covers.forEach((c, i) => {
    if (c.tmpfs) {
      // Memory-backed: sized to the write cap, so it cannot be filled past it either.
      must(
        lib.mount("pencil-tmp", c.path, "tmpfs", MS.NOSUID | MS.NODEV, `mode=1777,size=${plan.fileBlocks}k`),
        `cannot cover ${c.path}`,
      );
      for (const p of points) {
        if (p.cover !== c.index) continue;
        try {
          mkdirSync(p.path, { recursive: true });
        } catch (error) {
          fail(`cannot make mount points in ${c.path}: ${(error as NodeJS.ErrnoException).code}`);
        }
      }
    } else {
      must(bind(`/proc/self/fd/${coverFds[i]}`, c.path), `cannot cover ${c.path}`);
      closeSync(coverFds[i]!);
    }
    keeps.forEach((k, j) => {
      if (k.cover !== c.index) return;
      must(bind(`/proc/self/fd/${keepFds[j]}`, k.path, true), `cannot keep ${k.path} reachable`);
      // An open descriptor would lead past the cover (openat "..") to what it hides: none reaches the command.
      closeSync(keepFds[j]!);
    });
  });
  for (const x of secrets) {
    const st = statSync(x, { throwIfNoEntry: false });
    if (st) must(bind(st.isDirectory() ? E : F, x), `cannot hide ${x}`);
  }
  // Over its mask, a settings file's credential-free copy (read-only: sealed below with the other binds). One the covers
  // left unreachable stays so.
  filtered.forEach((f, i) => {
    const st = statSync(f.target, { throwIfNoEntry: false });
    if (st?.isFile() || st?.isCharacterDevice()) {
      must(bind(`/proc/self/fd/${filteredFds[i]}`, f.target), `cannot show ${f.target} filtered`);
      binds.push(f.target);
    }
    closeSync(filteredFds[i]!);
  });

  // The seal: every mount but the scratch, the workspace path and the private temporary space read-only.
  const open = new Set([S, R, ...covers.filter((c) => c.writable).map((c) => c.path)]);
  const stoodOver = [S, R, ...covers.map((c) => c.path), ...secrets];
  for (const m of mountTable()) {
    if (open.has(m.point) || m.options.includes("ro")) continue;
    // An automount point holds nothing to write, and naming it would trigger it (systemd's binfmt_misc under /proc).
    if (m.type === "autofs") continue;
    if (inherited.has(m.id)) {
      // An inherited mount below one of ours is out of the command's reach: nothing to seal (nor can it be named).
      // /dev and /proc are fresh (a private /dev, the pid namespace's own proc, itself sealed).
      if (stoodOver.some((c) => isInsideOrAt(c, m.point))) continue;
      if (m.point.startsWith("/dev/") || m.point.startsWith("/proc/")) continue;
    }
    const error = remountReadOnly(lib, m.point, m.options);
    // A mount point this setup cannot reach by path, the command (same user, fewer rights) cannot reach either.
    if (error !== null && existsSync(m.point)) fail(`cannot make ${m.point} read-only: ${error}`);
  }
  const sealed = [
    ...binds,
    ...keeps.map((k) => k.path),
    ...covers.filter((c) => !c.writable).map((c) => c.path),
    "/",
    "/proc/sys",
    "/sys",
    "/dev",
  ];
  for (const b of sealed) {
    if (b === S || b === R) continue;
    let writable = true;
    try {
      accessSync(b, constants.W_OK);
    } catch {
      // Not writable by this user: bound read-only.
      writable = false;
    }
    if (writable) fail(`${b} could not be made read-only`);
  }

  try {
    process.chdir(R);
  } catch {
    // fail() ends the setup with this reason: the command never starts.
    fail(`cannot enter the workspace path ${R}`);
  }
  // A program started in Pencil's own process group (a stdio server) signalling "its group" (kill 0) would reach
  // Pencil, unshare and the launcher shell, outside every namespace: it gets a session of its own.
  if (plan.newSession) must(lib.newSession(), "cannot start a session of its own");
  // No way to the owner's terminal: the private /dev has a tty node, which opens the controlling terminal.
  must(lib.dropControllingTerminal(), "cannot give up the controlling terminal");
  if (plan.stderr === "stdout") must(lib.dup2(1, 2), "cannot merge the command's output");
  // No file larger than the write cap; the runner watches the total.
  must(lib.limitFileSize(plan.fileBlocks * 1024), "cannot cap file sizes");
  if (plan.forwarder) startForwarder(plan, lib);
  const env = plan.env;
  for (const fd of readdirSync("/proc/self/fd")) if (Number(fd) > 2) lib.closeOnExec(Number(fd));
  lib.resetSignals();
  const why = lib.execve(plan.setpriv, [plan.setpriv, ...DROP_PRIVILEGES, ...plan.argv], env);
  fail(`cannot start the command: ${why}`);
}

/**
 * The only way out is Pencil's proxy (with the network off, one that refuses at once): a forwarder (without
 * capabilities either) from this private network's 127.0.0.1:port to the proxy's unix socket in the scratch. The
 * socket listens before the command starts, made here and handed to the forwarder as its descriptor 3: a command
 * that connects before the forwarder's Bun has started waits in the backlog, never meets a refused connection, and
 * nothing waits for the forwarder to be ready.
 */
function startForwarder(plan: SetupPlan, lib: Lib): void {
  const fw = plan.forwarder!;
  const listening = lib.listenOnLoopback(fw.port);
  if (typeof listening === "string") fail(`cannot listen for the network proxy on 127.0.0.1:${fw.port}: ${listening}`);
  Bun.spawn([plan.setpriv, ...DROP_PRIVILEGES, fw.bun, fw.script, fw.socket], {
    stdio: ["ignore", "ignore", "ignore", listening],
    // The single executable runs its own CLI unless told to be plain Bun; Bun itself ignores the variable.
    env: { ...process.env, BUN_BE_BUN: "1" },
  });
}

/** Runs the setup from the plan at `planPath`; never returns (it becomes the command, or exits 97). */
export async function runSetup(planPath: string | undefined): Promise<never> {
  try {
    if (process.pid !== 1) fail("not the first process of a fresh pid namespace");
    if (!planPath) fail("no plan given");
    const plan = JSON.parse(readFileSync(planPath, "utf8")) as SetupPlan;
    let lib: Lib;
    try {
      lib = await import("./libc.ts");
    } catch (error) {
      fail((error as Error).message);
    }
    setUp(plan, lib);
  } catch (error) {
    fail(`the setup stopped: ${(error as Error).message ?? String(error)}`);
  }
}

// From source Bun runs this file itself; the single executable calls runSetup from its entry point (SETUP_MODE).
if (import.meta.main) await runSetup(process.argv[2]);
