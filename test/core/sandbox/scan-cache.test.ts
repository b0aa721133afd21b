import { describe, expect, test } from "bun:test";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { dirWatcher, newInotifyWatcher } from "../../../core/sandbox/dir-watch.ts";
import { ScanCache, scanBelow } from "../../../core/sandbox/scan-cache.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

// The remembered search for denied entries: whatever changed between two searches,
// the second answers exactly as a search from scratch would.

const denyEnv = (p: string) => basename(p).startsWith(".env") || basename(p) === "id_rsa";

function realTemp(prefix: string): string {
  return realpathSync(tempDir(prefix));
}

/** A toolchain-like tree with a few denied entries at different depths. */
function makeTree(): { root: string; outside: string } {
  const root = realTemp("pencil-scan-root-");
  const outside = realTemp("pencil-scan-outside-");
  writeTree(root, {
    "bin/python": "",
    "lib/python3/site/pkg/a.py": "",
    "lib/python3/site/pkg/sub/b.py": "",
    "lib/python3/site/other/c.py": "",
    "share/doc/README": "",
    "conf/settings.ini": "",
    ".env": "x",
    "keys/id_rsa": "x",
    "keys/id_rsa.pub": "",
  });
  return { root, outside };
}

function dirsBelow(root: string): string[] {
  const out = [root];
  for (const e of readdirSync(root, { withFileTypes: true }))
    if (e.isDirectory()) out.push(...dirsBelow(join(root, e.name)));
  return out;
}

/**
 * Waits until the file system's clock has moved past every stamp of the directories below
 * `root`, so a change made now gets stamps of its own (a probe file elsewhere shows the clock).
 */
function waitPastStamps(root: string): void {
  let newest = 0n;
  for (const d of dirsBelow(root)) {
    const st = lstatSync(d, { bigint: true });
    for (const t of [st.mtimeNs, st.ctimeNs]) if (t > newest) newest = t;
  }
  const probe = join(realTemp("pencil-scan-clock-"), "probe");
  for (let i = 0; i < 20_000; i++) {
    writeFileSync(probe, String(i));
    if (lstatSync(probe, { bigint: true }).ctimeNs > newest) return;
    Bun.sleepSync(1);
  }
  throw new Error("the file system clock did not move");
}

const sorted = (xs: string[]) => [...xs].sort();

interface Case {
  name: string;
  change: (root: string, outside: string) => void;
  /** Relative paths that must be found after the change, and that must not. */
  found: string[];
  gone: string[];
}

const cases: Case[] = [
  {
    name: "a .env created deep in an unchanged tree",
    change: (root) => writeFileSync(join(root, "lib/python3/site/pkg/sub/.env"), "x"),
    found: ["lib/python3/site/pkg/sub/.env", ".env"],
    gone: [],
  },
  {
    name: "a .env renamed in from outside the tree",
    change: (root, outside) => {
      writeFileSync(join(outside, "plain"), "x");
      renameSync(join(outside, "plain"), join(root, "share/doc/.env.local"));
    },
    found: ["share/doc/.env.local"],
    gone: [],
  },
  {
    name: "a file renamed to a denied name in place",
    change: (root) => renameSync(join(root, "conf/settings.ini"), join(root, "conf/.env")),
    found: ["conf/.env"],
    gone: [],
  },
  {
    name: "a denied file deleted",
    change: (root) => rmSync(join(root, ".env")),
    found: ["keys/id_rsa"],
    gone: [".env"],
  },
  {
    name: "a directory deleted with the denied file in it",
    change: (root) => rmSync(join(root, "keys"), { recursive: true }),
    found: [".env"],
    gone: ["keys/id_rsa"],
  },
  {
    name: "a directory removed and made again under the same name, a .env deep in the new one",
    change: (root) => {
      rmSync(join(root, "lib/python3/site/pkg"), { recursive: true });
      writeTree(root, { "lib/python3/site/pkg/deeper/.env": "x", "lib/python3/site/pkg/a.py": "" });
    },
    found: ["lib/python3/site/pkg/deeper/.env"],
    gone: [],
  },
  {
    name: "a directory swapped for another with the same name (renamed over)",
    change: (root, outside) => {
      writeTree(outside, { "pkg2/sub/.env.production": "x", "pkg2/sub/b.py": "" });
      renameSync(join(root, "lib/python3/site/pkg"), join(outside, "old-pkg"));
      renameSync(join(outside, "pkg2"), join(root, "lib/python3/site/pkg"));
    },
    found: ["lib/python3/site/pkg/sub/.env.production"],
    gone: [],
  },
  {
    name: "a new subtree moved in with a .env three levels down",
    change: (root, outside) => {
      writeTree(outside, { "tree/a/b/c/.env": "x" });
      renameSync(join(outside, "tree"), join(root, "share/tree"));
    },
    found: ["share/tree/a/b/c/.env"],
    gone: [],
  },
  {
    name: "a file replaced by a directory of the same name holding a .env",
    change: (root) => {
      rmSync(join(root, "bin/python"));
      writeTree(root, { "bin/python/.env": "x" });
    },
    found: ["bin/python/.env"],
    gone: [],
  },
  {
    name: "a directory renamed to a denied name: listed, not entered",
    change: (root) => renameSync(join(root, "share/doc"), join(root, "share/.env.d")),
    found: ["share/.env.d"],
    gone: [],
  },
  {
    name: "a link to a directory holding a .env: not followed, as in a search from scratch",
    change: (root, outside) => {
      writeTree(outside, { "linked/.env": "x" });
      symlinkSync(join(outside, "linked"), join(root, "share/linked"));
    },
    found: [],
    gone: ["share/linked/.env"],
  },
];

/** Whether inotify watches work for directories where the tests make them (not on every file system). */
function watchesWork(): boolean {
  const watcher = dirWatcher();
  const dir = realTemp("pencil-scan-probe-");
  return watcher?.watch(dir, lstatSync(dir, { bigint: true }).dev) != null;
}

interface Mode {
  name: string;
  options: () => ConstructorParameters<typeof ScanCache>[0];
  /** Wait for the file system's clock to pass the tree's stamps before the second search. */
  wait: boolean;
  /** Directories lstat'ed by a search after which nothing changed: all of them, or the root alone; null: not said. */
  checkedWhenUnchanged: "all" | "root" | null;
}

const modes: Mode[] = [
  // The change is seen through the directories' lstat identity alone (the clock is waited past first).
  {
    name: "lstat alone, stamps trusted",
    options: () => ({ racyWindowNs: 0n, watcher: null }),
    wait: true,
    checkedWhenUnchanged: "all",
  },
  // Directories under a watch that saw nothing are not even lstat'ed; the change is seen through the watches' events.
  ...(watchesWork()
    ? [
        {
          name: "inotify watches",
          options: () => ({ watcher: dirWatcher() }),
          wait: false,
          checkedWhenUnchanged: "root" as const,
        },
      ]
    : []),
  // Right after a search every stamp is too fresh to vouch for anything: all is read again.
  {
    name: "lstat alone, stamps too fresh to trust",
    options: () => ({ watcher: null }),
    wait: false,
    checkedWhenUnchanged: null,
  },
];

describe("ScanCache: a second search answers as a search from scratch", () => {
  describe.each(cases)("$name", (c) => {
    test.each(modes)("$name", (mode) => {
      const { root, outside } = makeTree();
      const cache = new ScanCache(mode.options());
      const cold = cache.below(root, "k", denyEnv);
      expect(sorted(cold.denied)).toEqual(sorted(scanBelow(root, denyEnv).denied));
      if (mode.wait) waitPastStamps(root);
      const warm = cache.below(root, "k", denyEnv);
      expect(sorted(warm.denied)).toEqual(sorted(cold.denied));
      if (mode.checkedWhenUnchanged !== null) {
        // Nothing changed: every listing reused.
        expect(warm.dirsRead).toBe(0);
        expect(warm.dirsReused).toBe(dirsBelow(root).length);
        expect(warm.dirsChecked).toBe(mode.checkedWhenUnchanged === "all" ? dirsBelow(root).length : 1);
      }
      c.change(root, outside);
      const after = cache.below(root, "k", denyEnv);
      expect(sorted(after.denied)).toEqual(sorted(scanBelow(root, denyEnv).denied));
      for (const p of c.found) expect(after.denied).toContain(join(root, p));
      for (const p of c.gone) expect(after.denied).not.toContain(join(root, p));
      // Only what changed was read again.
      if (mode.checkedWhenUnchanged !== null) expect(after.dirsReused).toBeGreaterThan(0);
    });
  });
});

describe("ScanCache: keys, limits, roots", () => {
  test("different policy keys never share answers, however the calls interleave", () => {
    const { root } = makeTree();
    writeTree(root, { "share/secret.txt": "x", "lib/python3/secret.txt": "x" });
    const denySecretTxt = (p: string) => basename(p) === "secret.txt";
    const cache = new ScanCache({ racyWindowNs: 0n });
    const table: [string, (p: string) => boolean][] = [
      ["env", denyEnv],
      ["txt", denySecretTxt],
      ["env", denyEnv],
      ["txt", denySecretTxt],
    ];
    for (const [i, [key, hidden]] of table.entries()) {
      if (i === 2) waitPastStamps(root);
      expect(sorted(cache.below(root, key, hidden).denied)).toEqual(sorted(scanBelow(root, hidden).denied));
    }
    expect(sorted(cache.below(root, "txt", denySecretTxt).denied)).toEqual(
      [join(root, "lib/python3/secret.txt"), join(root, "share/secret.txt")].sort(),
    );
  });

  test("a tree over the limit is reported incomplete, from scratch and remembered alike", () => {
    const root = realTemp("pencil-scan-big-");
    for (let i = 0; i < 6; i++) writeTree(root, { [`d${i}/a`]: "", [`d${i}/b`]: "", [`d${i}/.env`]: "x" });
    const cache = new ScanCache({ racyWindowNs: 0n });
    expect(scanBelow(root, denyEnv, 10).complete).toBe(false);
    expect(cache.below(root, "k", denyEnv, 10).complete).toBe(false);
    waitPastStamps(root);
    expect(cache.below(root, "k", denyEnv, 10).complete).toBe(false);
    const whole = cache.below(root, "k", denyEnv, 1000);
    expect(whole.complete).toBe(true);
    expect(whole.denied.length).toBe(6);
  });

  test("a root that is a link is searched through it, and a change behind the link is seen", () => {
    const { root } = makeTree();
    const link = join(realTemp("pencil-scan-link-"), "tool");
    symlinkSync(root, link);
    const cache = new ScanCache({ racyWindowNs: 0n });
    expect(sorted(cache.below(link, "k", denyEnv).denied)).toEqual(sorted(scanBelow(link, denyEnv).denied));
    waitPastStamps(root);
    mkdirSync(join(root, "new"));
    writeFileSync(join(root, "new/.env"), "x");
    expect(cache.below(link, "k", denyEnv).denied).toContain(join(link, "new/.env"));
  });

  test("a directory stamped within the racy window of its reading is read again, though its identity is unchanged", () => {
    const { root } = makeTree();
    let newest = 0n;
    for (const d of dirsBelow(root)) {
      const st = lstatSync(d, { bigint: true });
      for (const t of [st.mtimeNs, st.ctimeNs]) if (t > newest) newest = t;
    }
    const table: [string, bigint, number][] = [
      ["read in the stamps' own second: every directory read again", newest + 500_000_000n, dirsBelow(root).length],
      ["read ten seconds after the stamps: none read again", newest + 10_000_000_000n, 0],
    ];
    for (const [, now, reread] of table) {
      const cache = new ScanCache({ nowNs: () => now, watcher: null });
      cache.below(root, "k", denyEnv);
      expect(cache.below(root, "k", denyEnv).dirsRead).toBe(reread);
    }
  });

  test.if(watchesWork())("notices lost (a queue overflow, a mount changed): every directory is read again", () => {
    const { root } = makeTree();
    const watcher = dirWatcher()!;
    const cache = new ScanCache({ watcher });
    const cold = cache.below(root, "k", denyEnv);
    expect(cache.below(root, "k", denyEnv).dirsRead).toBe(0);
    watcher.distrust();
    const after = cache.below(root, "k", denyEnv);
    expect(after.dirsRead).toBe(dirsBelow(root).length);
    expect(sorted(after.denied)).toEqual(sorted(cold.denied));
    expect(cache.below(root, "k", denyEnv).dirsRead).toBe(0);
  });

  test.if(watchesWork())("past the watch budget, directories are lstat'ed instead, and changes still seen", () => {
    const { root } = makeTree();
    const cache = new ScanCache({ watcher: newInotifyWatcher(3) });
    cache.below(root, "k", denyEnv);
    const warm = cache.below(root, "k", denyEnv);
    expect(warm.dirsChecked).toBeGreaterThan(1);
    expect(warm.dirsChecked).toBeLessThan(dirsBelow(root).length);
    writeFileSync(join(root, "lib/python3/site/other/.env"), "x");
    writeFileSync(join(root, ".env.test"), "x");
    expect(sorted(cache.below(root, "k", denyEnv).denied)).toEqual(sorted(scanBelow(root, denyEnv).denied));
  });

  test("a root that is gone holds nothing", () => {
    const cache = new ScanCache();
    const gone = join(realTemp("pencil-scan-gone-"), "none");
    expect(cache.below(gone, "k", denyEnv)).toMatchObject({ denied: [], complete: true });
  });
});
