import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { realPathLoose } from "../workspace.ts";
import { parseGitConfig } from "./config-file.ts";

/** Git stops following includes this deep; so does this reading. */
const MAX_INCLUDE_DEPTH = 10;

/** Where a repository keeps its configuration: the git directory, and the common one (they differ in a linked worktree). */
interface GitDirs {
  gitDir: string;
  commonDir: string;
}

/** The git directories of the repository `dir` is in, found from `.git` upwards as git does; null outside any. */
function findGitDirs(dir: string): GitDirs | null {
  for (let d = resolve(dir); ; d = dirname(d)) {
    const dotGit = join(d, ".git");
    const gitDir = gitDirAt(dotGit);
    if (gitDir) {
      let commonDir = gitDir;
      try {
        const common = readFileSync(join(gitDir, "commondir"), "utf8").trim();
        if (common) commonDir = resolve(gitDir, common);
      } catch {
        // No commondir file: a main repository, whose git directory is its own common one.
      }
      return { gitDir, commonDir };
    }
    if (dirname(d) === d) return null;
  }
}

function gitDirAt(dotGit: string): string | null {
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, "utf8"));
    return m ? resolve(dirname(dotGit), m[1]!) : null;
  } catch {
    return null; // No .git here (or not readable): keep looking upwards, as git does.
  }
}

/** The repository's own config files: the common `config`, and a linked worktree's `config.worktree`. */
function repositoryConfigFiles(dirs: GitDirs): string[] {
  return [join(dirs.commonDir, "config"), join(dirs.gitDir, "config.worktree")];
}

/**
 * Every file the repository's configuration includes (`include.path`, `includeIf.*.path`, whatever the condition),
 * followed through the included files themselves, as real absolute paths (links resolved, as a change's `real` is). Read from the files, never by running git.
 * A file that cannot be read or parsed includes nothing more (git would refuse it; nothing of it is trusted here).
 */
export function includedConfigFiles(workspaceRoot: string, home: string | undefined = process.env.HOME): Set<string> {
  const found = new Set<string>();
  const dirs = findGitDirs(workspaceRoot);
  if (!dirs) return found;
  const visit = (file: string, depth: number) => {
    if (depth > MAX_INCLUDE_DEPTH) return;
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return; // Missing or unreadable: git includes nothing from it either.
    }
    let entries;
    try {
      entries = parseGitConfig(text);
    } catch {
      return; // Git refuses a file it cannot parse, includes and all.
    }
    for (const e of entries) {
      if ((e.section !== "include" && e.section !== "includeif") || e.name !== "path" || !e.value) continue;
      const lexical = includeTarget(e.value, file, home);
      const target = lexical === null ? null : realPathLoose(lexical).real;
      if (target === null || found.has(target)) continue;
      found.add(target);
      visit(target, depth + 1);
    }
  };
  for (const f of repositoryConfigFiles(dirs)) visit(f, 0);
  return found;
}

/** An include's path as git resolves it: `~/` from the home, relative to the including file's directory. */
function includeTarget(value: string, from: string, home: string | undefined): string | null {
  if (value.startsWith("~/")) return home ? join(home, value.slice(2)) : null;
  return isAbsolute(value) ? resolve(value) : resolve(dirname(from), value);
}
