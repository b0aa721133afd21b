import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { planHiding, projectAncestor, type Hiding } from "../../../core/sandbox/hiding.ts";
import { describePlan, planMounts, prepareCoverDirs } from "../../../core/sandbox/mount-plan.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

// The namespace sandbox as data: these run on any machine, with or without namespaces.

const hiding: Hiding = {
  covers: [
    {
      path: "/home/me",
      with: "dir",
      writable: false,
      keeps: ["/home/me/.nvm", "/home/me/proj"],
      mountPoints: ["/home/me/.nvm", "/home/me/proj"],
    },
    { path: "/srv", with: "dir", writable: false, keeps: [], mountPoints: [] },
    { path: "/tmp", with: "dir", writable: true, keeps: ["/tmp/pencil-run-x"], mountPoints: ["/tmp/pencil-run-x"] },
    { path: "/dev/shm", with: "tmpfs", writable: true, keeps: [], mountPoints: ["/dev/shm/inner"] },
  ],
  secrets: ["/home/me/.ssh", "/etc/shadow", "/home/me/.nvm/.env"],
  unscanned: [],
};
const scratch = {
  root: "/tmp/pencil-run-x",
  mounts: [{ source: "/home/me/proj/node_modules", target: "/tmp/pencil-run-x/ws/node_modules" }],
  shared: [
    {
      rel: "node_modules",
      real: "/home/me/proj/node_modules",
      masks: [{ path: "/tmp/pencil-run-x/ws/node_modules/pkg/.env", dir: false }],
    },
  ],
};

describe("planMounts", () => {
  test("binds, then the masks inside them, then each cover with what it keeps, secrets last", () => {
    const plan = planMounts(scratch, hiding);
    const ops = plan.steps.map((s) => s.op);
    expect(ops[0]).toBe("bind");
    expect(ops[1]).toBe("mask");
    expect(ops.lastIndexOf("cover")).toBeLessThan(ops.indexOf("secret"));
    expect(ops.slice(-3)).toEqual(["secret", "secret", "secret"]);
    // Each keep follows its own cover.
    plan.steps.forEach((s, i) => {
      if (s.op !== "keep") return;
      const cover = plan.steps
        .slice(0, i)
        .reverse()
        .find((x) => x.op === "cover");
      expect(cover && cover.op === "cover" && cover.index).toBe(s.cover);
    });
  });

  test("what the command sees, described: covered, writable temporary space, kept, bound read-only, hidden", () => {
    expect(describePlan(planMounts(scratch, hiding))).toEqual({
      scratch: "copy",
      covered: ["/home/me", "/srv", "/tmp", "/dev/shm"],
      writableCovers: ["/tmp", "/dev/shm"],
      kept: ["/home/me/.nvm", "/home/me/proj", "/tmp/pencil-run-x"],
      bound: ["/tmp/pencil-run-x/ws/node_modules"],
      hidden: ["/tmp/pencil-run-x/ws/node_modules/pkg/.env", "/home/me/.ssh", "/etc/shadow", "/home/me/.nvm/.env"],
    });
  });

  test("a directory cover gets an empty source in the scratch with its mount points; a tmpfs cover makes them after mounting", () => {
    const plan = planMounts(scratch, hiding);
    expect(plan.coverDirs).toEqual([
      { dir: "/tmp/pencil-run-x/cover-0", mode: 0o755, mountPoints: [".nvm", "proj"] },
      { dir: "/tmp/pencil-run-x/cover-1", mode: 0o755, mountPoints: [] },
      { dir: "/tmp/pencil-run-x/cover-2", mode: 0o1777, mountPoints: ["pencil-run-x"] },
    ]);
    expect(plan.steps.filter((s) => s.op === "mount-point")).toEqual([
      { op: "mount-point", path: "/dev/shm/inner", cover: 3 },
    ]);
    expect(plan.steps.find((s) => s.op === "cover" && s.path === "/dev/shm")).toMatchObject({
      source: "tmpfs",
      tmpfs: true,
      writable: true,
    });
  });

  test("no hiding (plain directory sharing only): binds and masks alone", () => {
    expect(planMounts(scratch, null).steps.map((s) => s.op)).toEqual(["bind", "mask"]);
  });

  test("prepareCoverDirs makes the sources with their modes and mount points", () => {
    const root = tempDir("pencil-plan-");
    mkdirSync(join(root, "x"));
    const plan = planMounts({ ...scratch, root }, hiding);
    prepareCoverDirs(plan);
    expect(statSync(join(root, "cover-2")).mode & 0o7777).toBe(0o1777);
    expect(existsSync(join(root, "cover-0", "proj"))).toBe(true);
    expect(existsSync(join(root, "cover-0", ".nvm"))).toBe(true);
  });
});

describe("a workspace's ancestors and sibling projects", () => {
  test.each([
    ["/usr/local/src/proj/ws", "/usr/local/src"],
    ["/usr/src/app", "/usr/src"],
    ["/etc/acme/ws", "/etc/acme"],
    ["/nix/store/x/ws", "/nix/store"],
    ["/srv/x/ws", "/srv"],
    ["/tmp/a/ws", "/tmp/a"],
    ["/usr/local/ws", null],
    ["/ws", null],
    ["/", null],
  ])("projectAncestor(/, %s) = %s", (ws, expected) => {
    expect(projectAncestor("/", ws)).toBe(expected);
  });

  /** A fake root: system directories, a workspace with a sibling project, a parent .env; planned as the sandbox would. */
  function plan(wsRel: string, pathRel: string[] = []) {
    const root = tempDir("pencil-plan-root-");
    const ws = join(root, wsRel);
    const main = join(root, wsRel, "../main");
    writeTree(root, { "usr/bin/sh": "", "usr/local/bin/tool": "", "etc/hosts": "" });
    writeTree(ws, { "README.md": "hi\n" });
    writeTree(main, {
      "bin/tool": "",
      ".env": "x",
      "app/.env.local": "x",
      "app/.envrc": "x",
      "keys/id_ed25519": "x",
      ".git/config": "x",
      ".git/HEAD": "x",
    });
    writeFileSync(join(ws, "../.env"), "x");
    const home = tempDir("pencil-plan-home-");
    const scratchRoot = join(tempDir("pencil-plan-scratch-"), "s");
    mkdirSync(scratchRoot);
    const hiding = planHiding({
      realHome: home,
      pencilHome: join(home, ".pencil"),
      wsRoot: ws,
      scratchRoot,
      path: pathRel.map((p) => join(root, p)).join(":"),
      root,
      env: {},
      unixSockets: [],
      systemDirs: [],
      installDir: join(home, "none"),
    });
    return { root, ws, main, seen: describePlan(planMounts({ root: scratchRoot, mounts: [], shared: [] }, hiding)) };
  }

  test("a workspace inside a system directory: its outermost project ancestor is covered, the workspace alone kept", () => {
    const { root, ws, seen } = plan("usr/local/src/proj/ws");
    expect(seen.covered).toContain(join(root, "usr/local/src"));
    expect(seen.covered).not.toContain(join(root, "usr"));
    expect(seen.covered).not.toContain(join(root, "usr/local"));
    expect(seen.kept).toContain(ws);
    expect(seen.kept.filter((k) => k.startsWith(join(root, "usr")))).toEqual([ws]);
  });

  test("a workspace in a non-system top-level directory: that directory is covered once, the sibling project not kept", () => {
    const { root, ws, main, seen } = plan("srv/x/ws");
    expect(seen.covered.filter((c) => c.startsWith(root))).toEqual([join(root, "srv")]);
    expect(seen.kept.filter((k) => k.startsWith(root))).toEqual([ws]);
    expect(seen.kept.some((k) => k.startsWith(main))).toBe(false);
  });

  test("a sibling checkout kept for the toolchain on PATH: every denied entry in it is hidden at any depth, the rest shown", () => {
    const { main, seen } = plan("srv/x/ws", ["srv/x/main/bin"]);
    expect(seen.kept).toContain(main);
    for (const p of [".env", "app/.env.local", "app/.envrc", "keys/id_ed25519", ".git/config"])
      expect(seen.hidden).toContain(join(main, p));
    expect(seen.hidden).not.toContain(join(main, ".git/HEAD"));
    expect(seen.hidden).not.toContain(join(main, "bin/tool"));
  });
});

describe("planMounts: the copy-on-write scratch", () => {
  const cow = {
    ...scratch,
    dir: "/tmp/pencil-run-x/ws",
    mounts: [],
    shared: [],
    overlay: {
      lower: "/home/me/proj",
      upper: "/tmp/pencil-run-x/upper",
      work: "/tmp/pencil-run-x/work",
      placed: ["src/a.ts"],
      deletions: ["old.ts"],
      hidden: [".env"],
    },
  };

  test("the overlay is mounted first, then the staged deletions and hidden entries removed through it; covers and secrets as before", () => {
    const plan = planMounts(cow, hiding);
    expect(plan.steps.slice(0, 3)).toEqual([
      {
        op: "overlay",
        lower: "/home/me/proj",
        upper: "/tmp/pencil-run-x/upper",
        work: "/tmp/pencil-run-x/work",
        target: "/tmp/pencil-run-x/ws",
      },
      { op: "whiteout", path: "/tmp/pencil-run-x/ws/old.ts" },
      { op: "whiteout", path: "/tmp/pencil-run-x/ws/.env" },
    ]);
    expect(describePlan(plan).scratch).toBe("overlay of /home/me/proj");
  });

  test("a copy has no overlay step", () => {
    expect(
      planMounts({ ...scratch, dir: "/tmp/pencil-run-x/ws" }, hiding).steps.some(
        (s) => s.op === "overlay" || s.op === "whiteout",
      ),
    ).toBe(false);
  });
});
