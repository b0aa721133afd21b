import { lstatSync, readdirSync, type Dirent, type Stats } from "node:fs";
import { join, resolve } from "node:path";
import { HOME_CREDENTIALS, type Decision } from "./policy.ts";
import { isInside, realPathLoose } from "../workspace.ts";

/** What a LinkGuard indexes: the workspace, and the places whose files are secret. */
export interface LinkGuardOptions {
  /** Real path of the workspace root. */
  root: string;
  /** The user's home directory (its HOME_CREDENTIALS are indexed). */
  home: string;
  /** Pencil's state directory, indexed as secret when given. */
  pencilHome?: string;
  /** Entries looked at per index at most; past it, what is not found stays unproven (default 200,000). */
  maxEntries?: number;
}

/** Judges a real path by its policy name alone: the caller's `decide` for one access. */
export type NameJudge = (real: string) => Decision;

/**
 * Hard links defeat the real-path rule: a workspace file can be another name of
 * `~/.ssh/id_ed25519` or of the workspace's `.env`, and no link resolution shows
 * it. A regular file with more than one link is judged by every name it has: its
 * device and inode are looked up among the secret places' files (denied at once)
 * and among the workspace's multiply-linked files (each name judged by the
 * policy, the most restrictive verdict wins). A file whose other names cannot all
 * be found may be a secret anywhere on the disk: reading it asks, with a warning,
 * and writing through it is refused. Both indexes are built once, on the first
 * multiply-linked file met, so a workspace without hard links costs one lstat per file.
 */
export class LinkGuard {
  private secrets: Map<string, string> | null = null;
  private names: Map<string, string[]> | null = null;
  private denied: Map<string, string> | null = null;
  private readonly maxEntries: number;

  constructor(private readonly options: LinkGuardOptions) {
    this.maxEntries = options.maxEntries ?? 200_000;
  }

  /**
   * The verdict the file's other names impose on `access` to `real`, or null when
   * it has only one name (or is not a regular file): then the policy's verdict on
   * `real` alone stands. `judge` is the policy for the same access.
   */
  judge(
    real: string,
    access: "read" | "write",
    judge: NameJudge,
    options: { unprovenRead?: "ask" | "allow" } = {},
  ): Decision | null {
    const st = statOrNull(real);
    if (!st || !st.isFile() || st.nlink <= 1) return null;
    const key = `${st.dev}:${st.ino}`;
    const shown = (p: string) => (isInside(this.options.root, p) ? p.slice(this.options.root.length + 1) || "." : p);
    const secret = this.secretIndex().get(key);
    if (secret !== undefined) {
      return {
        decision: "deny",
        reason: `${shown(real)} is a hard link to ${secret}: the same file under another name, and that file holds credentials. It is never ${access === "read" ? "read" : "written"}; do not look for other ways to reach it.`,
      };
    }
    if (access === "read" && options.unprovenRead === "allow") {
      // A command's copy takes a file whose other names are unknown (pnpm links every dependency from its store),
      // never one of a known secret (above) or of a name the policy refuses, the only names looked for here.
      const other = this.deniedIndex(judge).get(key);
      if (other === undefined || other === real || !sameFile(other, st)) return null;
      return {
        decision: "deny",
        reason: `${shown(real)} is a hard link to ${shown(other)} (the same file under another name), which the policy refuses: ${judge(other).reason}`,
      };
    }
    const others = (this.nameIndex().get(key) ?? []).filter((p) => p !== real && sameFile(p, st));
    let strictest: Decision | null = null;
    for (const other of others) {
      const verdict = judge(other);
      if (verdict.decision === "deny") {
        return {
          decision: "deny",
          reason: `${shown(real)} is a hard link to ${shown(other)} (the same file under another name), which the policy refuses: ${verdict.reason}`,
        };
      }
      if (verdict.decision === "ask" && strictest === null) {
        strictest = {
          decision: "ask",
          reason: `${shown(real)} is a hard link to ${shown(other)} (the same file under another name): ${verdict.reason}`,
          ...(verdict.rule ? { rule: verdict.rule } : {}),
        };
      }
    }
    // Every name was found in the workspace: the strictest of them has spoken.
    if (others.length + 1 >= st.nlink) return strictest;
    const unseen = st.nlink - 1 - others.length;
    if (access === "write") {
      return {
        decision: "deny",
        reason: `${shown(real)} has ${st.nlink} hard links (names of the same file) and ${unseen === 1 ? "one is" : `${unseen} are`} outside the workspace, where a write through it would land too. Writing it is refused; ask the user to replace it with a plain copy first.`,
      };
    }
    return {
      decision: "ask",
      reason: `${shown(real)} has ${st.nlink} hard links (names of the same file) and ${unseen === 1 ? "one is" : `${unseen} are`} outside the workspace, so it may be another name of a secret file. Reading it needs the user's approval; if refused, do without it.`,
    };
  }

  /** `dev:ino` of every regular file in the secret places, with the name to show for it. */
  private secretIndex(): Map<string, string> {
    if (this.secrets) return this.secrets;
    const index = new Map<string, string>();
    const budget = { left: this.maxEntries };
    const home = resolve(this.options.home);
    const places = HOME_CREDENTIALS.map((rel) => ({ path: join(home, rel), shown: `~/${rel}` }));
    if (this.options.pencilHome)
      places.push({ path: resolve(this.options.pencilHome), shown: this.options.pencilHome });
    for (const place of places) {
      let real: string;
      try {
        real = realPathLoose(place.path).real;
      } catch {
        // A place that does not resolve holds nothing to index.
        continue;
      }
      collect(real, budget, (p, st) => {
        if (st.nlink > 1)
          index.set(`${st.dev}:${st.ino}`, p === real ? place.shown : `${place.shown}/${p.slice(real.length + 1)}`);
      });
    }
    this.secrets = index;
    return index;
  }

  /**
   * The workspace's multiply-linked files whose own name the policy refuses (a
   * `.env`, a key file, `.git/config`), by `dev:ino`: a walk by names, which opens
   * only those files, so it costs a directory listing per directory.
   */
  private deniedIndex(judge: NameJudge): Map<string, string> {
    if (this.denied) return this.denied;
    const index = new Map<string, string>();
    collect(
      this.options.root,
      { left: this.maxEntries },
      (p, st) => {
        if (st.nlink > 1) index.set(`${st.dev}:${st.ino}`, p);
      },
      (p) => judge(p).decision === "deny",
    );
    this.denied = index;
    return index;
  }

  /** The names, inside the workspace, of each multiply-linked regular file there. */
  private nameIndex(): Map<string, string[]> {
    if (this.names) return this.names;
    const index = new Map<string, string[]>();
    collect(this.options.root, { left: this.maxEntries }, (p, st) => {
      if (st.nlink <= 1) return;
      const key = `${st.dev}:${st.ino}`;
      const list = index.get(key);
      if (list) list.push(p);
      else index.set(key, [p]);
    });
    this.names = index;
    return index;
  }
}

/**
 * Calls `onFile` for each regular file at or below `path` (links not followed), until
 * the budget runs out; with `wanted`, only for the files it accepts by path, and
 * only those are looked at (lstat) at all.
 */
function collect(
  path: string,
  budget: { left: number },
  onFile: (path: string, st: Stats) => void,
  wanted?: (path: string) => boolean,
): void {
  const st = statOrNull(path);
  if (!st) return;
  if (st.isFile()) {
    if (!wanted || wanted(path)) onFile(path, st);
    return;
  }
  if (st.isDirectory()) walkDir(path, budget, onFile, wanted);
}

function walkDir(
  dir: string,
  budget: { left: number },
  onFile: (path: string, st: Stats) => void,
  wanted?: (path: string) => boolean,
): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    // An unreadable directory: nothing in it can be indexed (nor read by a tool, which is refused there).
    return;
  }
  for (const e of entries) {
    if (budget.left-- <= 0) return;
    const p = join(dir, e.name);
    if (e.isDirectory()) walkDir(p, budget, onFile, wanted);
    else if (e.isFile() && (!wanted || wanted(p))) {
      const st = statOrNull(p);
      if (st?.isFile()) onFile(p, st);
    }
  }
}

function statOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    // Gone or unreadable: no inode to compare.
    return null;
  }
}

function sameFile(path: string, st: Stats): boolean {
  const other = statOrNull(path);
  return other !== null && other.dev === st.dev && other.ino === st.ino;
}

/** The stricter of two verdicts (deny > ask > allow); the first when equal. */
export function stricter(a: Decision, b: Decision | null): Decision {
  if (!b) return a;
  const rank = { allow: 0, ask: 1, deny: 2 } as const;
  return rank[b.decision] > rank[a.decision] ? b : a;
}
