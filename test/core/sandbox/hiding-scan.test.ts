import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compilePolicy, parseRule } from "../../../core/policy/policy.ts";
import { commandDenies, type HidingInput, planHiding } from "../../../core/sandbox/hiding.ts";
import { ScanCache } from "../../../core/sandbox/scan-cache.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

// planHiding with its searches remembered: the same plan as from scratch, a change in a
// kept directory seen by the next plan, and a directory too big to search whole not shown.

/** A fake root with a sibling checkout kept for the toolchain on PATH (srv/x/main/bin). */
function setup(wsRel = "srv/x/ws") {
  const root = realpathSync(tempDir("pencil-hscan-root-"));
  const ws = join(root, wsRel);
  const main = join(root, "srv/x/main");
  writeTree(root, { "usr/bin/sh": "", "etc/hosts": "", "etc/app/.env": "x" });
  writeTree(ws, { "README.md": "hi\n" });
  writeTree(main, { "bin/tool": "", ".env": "x", "lib/deep/er/mod.py": "", ".git/config": "x", ".git/HEAD": "x" });
  const home = realpathSync(tempDir("pencil-hscan-home-"));
  const scratchRoot = join(realpathSync(tempDir("pencil-hscan-scratch-")), "s");
  mkdirSync(scratchRoot);
  const input: HidingInput = {
    realHome: home,
    pencilHome: join(home, ".pencil"),
    wsRoot: ws,
    scratchRoot,
    path: join(main, "bin"),
    root,
    env: {},
    unixSockets: [],
    systemDirs: [join(root, "etc")],
    installDir: join(home, "none"),
  };
  return { root, ws, main, input };
}

const kept = (h: ReturnType<typeof planHiding>) => h.covers.flatMap((c) => c.keeps);

describe("planHiding with remembered searches", () => {
  test("the plan from the cache equals the plan from scratch, before and after a .env appears deep in a kept directory", () => {
    const { main, input } = setup();
    const cache = new ScanCache();
    const plain = () => planHiding({ ...input, scanCache: null });
    const cached = () => planHiding({ ...input, scanCache: cache });
    expect(cached()).toEqual(plain());
    expect(cached()).toEqual(plain());
    writeFileSync(join(main, "lib/deep/er/.env.local"), "x");
    const after = cached();
    expect(after.secrets).toContain(join(main, "lib/deep/er/.env.local"));
    expect(after).toEqual(plain());
  });

  test("a predicate given without a key is judged afresh each time; with different keys, never mixed", () => {
    const { main, input } = setup();
    const cache = new ScanCache({ racyWindowNs: 0n });
    const denyEnv = (p: string) => p.endsWith("/.env");
    const denyMod = (p: string) => p.endsWith("/mod.py");
    const table: [Partial<HidingInput>, string, string][] = [
      [{ hidden: denyEnv }, join(main, ".env"), join(main, "lib/deep/er/mod.py")],
      [{ hidden: denyMod }, join(main, "lib/deep/er/mod.py"), join(main, ".env")],
      [{ hidden: denyEnv, hiddenKey: "env" }, join(main, ".env"), join(main, "lib/deep/er/mod.py")],
      [{ hidden: denyMod, hiddenKey: "mod" }, join(main, "lib/deep/er/mod.py"), join(main, ".env")],
      [{ hidden: denyEnv, hiddenKey: "env" }, join(main, ".env"), join(main, "lib/deep/er/mod.py")],
    ];
    for (const [given, masked, shown] of table) {
      const h = planHiding({ ...input, ...given, scanCache: cache });
      expect(h.secrets).toContain(masked);
      expect(h.secrets).not.toContain(shown);
    }
  });

  test("commandDenies: the key changes with every input its answers depend on", () => {
    const root = realpathSync(tempDir("pencil-hscan-keys-"));
    const denies = (ws: string, home: string, pencilHome: string, secrets: string[], rules: string[] = []) =>
      commandDenies(
        compilePolicy({
          workspaceRoot: join(root, ws),
          home: join(root, home),
          pencilHome: join(root, pencilHome),
          rules: rules.map((r) => parseRule(r, "deny", "test")),
        }),
        secrets.map((s) => join(root, s)),
      );
    const key = (...args: Parameters<typeof denies>) => denies(...args).key;
    const base = key("ws", "home", "home/.pencil", ["home/.ssh"]);
    expect(key("ws", "home", "home/.pencil", ["home/.ssh"])).toBe(base);
    for (const other of [
      key("ws", "home2", "home/.pencil", ["home/.ssh"]),
      key("ws", "home", "state", ["home/.ssh"]),
      key("ws", "home", "home/.pencil", ["home/.aws"]),
      key("ws", "home", "home/.pencil", []),
      key("ws", "home", "home/.pencil", ["home/.ssh"], ["Read(./private/**)"]),
    ])
      expect(other).not.toBe(base);
    // A rule written relative to the workspace denies another place in another workspace: another key.
    expect(key("ws2", "home", "home/.pencil", ["home/.ssh"], ["Read(./private/**)"])).not.toBe(
      key("ws", "home", "home/.pencil", ["home/.ssh"], ["Read(./private/**)"]),
    );
    // The workspace root alone decides whether a read is allowed or asked, never whether it is denied: one key, and
    // the same answers, inside either workspace and outside both.
    const here = denies("ws", "home", "home/.pencil", ["home/.ssh"]);
    const there = denies("ws2", "home", "home/.pencil", ["home/.ssh"]);
    expect(there.key).toBe(here.key);
    const names = [
      ".env",
      ".env.local",
      "a.txt",
      ".git/config",
      ".git/HEAD",
      ".pencil/settings.json",
      "id_rsa",
      "x.pem",
    ];
    const paths = ["ws", "ws2", "elsewhere", "home", "home/.pencil", "home/.ssh"].flatMap((d) =>
      names.map((n) => join(root, d, n)),
    );
    expect(paths.map(there.hidden)).toEqual(paths.map(here.hidden));
    expect(paths.filter(here.hidden).length).toBeGreaterThan(0);
    expect(paths.filter((p) => !here.hidden(p)).length).toBeGreaterThan(0);
  });
});

describe("planHiding: a directory too big to search whole is not shown", () => {
  test("a kept toolchain over the limit is left covered and named, and the workspace inside it still kept alone", () => {
    const { main, input } = setup("srv/x/main/ws");
    for (let i = 0; i < 30; i++) writeFileSync(join(main, "lib", `f${i}.py`), "");
    const whole = planHiding({ ...input, scanCache: new ScanCache() });
    expect(kept(whole)).toContain(main);
    expect(whole.unscanned).toEqual([]);
    for (const cache of [new ScanCache(), null]) {
      const h = planHiding({ ...input, scanLimit: 20, systemDirs: [], scanCache: cache });
      expect(h.unscanned).toEqual([main]);
      expect(kept(h)).not.toContain(main);
      expect(kept(h)).toContain(input.wsRoot);
      expect(kept(h).some((k) => k.startsWith(`${main}/`) && k !== input.wsRoot)).toBe(false);
    }
  });

  test("a system directory over the limit is masked whole and named", () => {
    const { root, input } = setup();
    for (let i = 0; i < 30; i++) writeFileSync(join(root, "etc", `conf${i}`), "");
    const h = planHiding({ ...input, path: "", scanLimit: 20 });
    expect(h.unscanned).toEqual([join(root, "etc")]);
    expect(h.secrets).toContain(join(root, "etc"));
    const whole = planHiding({ ...input, path: "" });
    expect(whole.unscanned).toEqual([]);
    expect(whole.secrets).toContain(join(root, "etc/app/.env"));
    expect(whole.secrets).not.toContain(join(root, "etc"));
  });
});
