import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type GitConfigEntry, formatGitConfig, parseGitConfig } from "./config-file.ts";
import { gitConfigValue } from "./run-git.ts";

/**
 * The variables a repository's config keeps in a command's copy, by section (and, for sections with names such as
 * `remote "origin"`, for any name). Everything else is left out: credentials (`http.extraHeader`, `credential.*`),
 * includes (they may lead to secret files), and every key that names a program (fsmonitor, hooksPath, filters,
 * textconv, ssh commands, pagers, editors, gpg, aliases, submodule update commands). A command's git then reads
 * the repository as the owner's does, without anything it could use to reach a remote or run code.
 */
const KEPT: Record<string, { plain?: readonly string[]; named?: readonly string[]; any?: true }> = {
  core: {
    plain: [
      "repositoryformatversion",
      "bare",
      "filemode",
      "logallrefupdates",
      "ignorecase",
      "precomposeunicode",
      "symlinks",
      "autocrlf",
      "eol",
      "safecrlf",
      "quotepath",
      "abbrev",
      "whitespace",
      "checkstat",
      "trustctime",
      "sharedrepository",
      "splitindex",
      "compression",
      "bigfilethreshold",
      "warnambiguousrefs",
      "commentchar",
    ],
  },
  extensions: { any: true },
  remote: {
    named: [
      "url",
      "pushurl",
      "fetch",
      "push",
      "tagopt",
      "mirror",
      "prune",
      "prunetags",
      "skipdefaultupdate",
      "promisor",
      "partialclonefilter",
    ],
  },
  branch: { named: ["remote", "merge", "rebase", "pushremote", "description"] },
  submodule: { named: ["path", "url", "branch", "active", "shallow"] },
  user: { plain: ["name", "email"] },
  author: { plain: ["name", "email"] },
  committer: { plain: ["name", "email"] },
  init: { plain: ["defaultbranch"] },
  pull: { plain: ["rebase", "ff"] },
  push: { plain: ["default", "autosetupremote", "followtags"] },
  merge: { plain: ["ff", "conflictstyle"] },
  fetch: { plain: ["prune", "prunetags"] },
  diff: { plain: ["renames", "algorithm", "mnemonicprefix", "noprefix", "context", "indentheuristic"] },
  status: { plain: ["showuntrackedfiles", "short", "branch", "relativepaths"] },
  rerere: { plain: ["enabled", "autoupdate"] },
  rebase: { plain: ["autosquash", "autostash", "updaterefs"] },
  commit: { plain: ["verbose", "cleanup", "status"] },
  tag: { plain: ["sort"] },
  color: { plain: ["ui", "diff", "status", "branch"] },
};

/** Keys whose value is a URL: what a password or token in them (`https://user:TOKEN@host/`) is taken out of. */
const URL_KEYS = new Set(["url", "pushurl"]);

/** A URL without the credentials it may carry: the whole user part of `scheme://user:secret@host`, the password of ssh. */
export function withoutCredentials(url: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*@)(.*)$/s.exec(url);
  if (!m) return url;
  const [, scheme, userinfo, rest] = m as unknown as [string, string, string, string];
  // An ssh user name is no secret and ssh needs it (ssh://git@host/…); its password, if any, is.
  if (/^ssh:\/\//i.test(scheme)) return `${scheme}${userinfo.split(":")[0]!.replace(/@$/, "")}@${rest}`;
  return `${scheme}${rest}`;
}

/** The entries of a repository's config that a command's copy keeps, credentials taken out of URLs. */
export function sandboxRepositoryEntries(entries: GitConfigEntry[]): GitConfigEntry[] {
  const out: GitConfigEntry[] = [];
  for (const e of entries) {
    const rule = KEPT[e.section];
    if (!rule) continue;
    const kept = rule.any || (e.subsection === null ? rule.plain?.includes(e.name) : rule.named?.includes(e.name));
    if (!kept) continue;
    const value = e.value !== null && URL_KEYS.has(e.name) ? withoutCredentials(e.value) : e.value;
    out.push({ ...e, value });
  }
  return out;
}

/**
 * The `.git/config` a command sees: the repository's own, filtered (see KEPT). Null when there is none to show or it
 * cannot be read or parsed (git would refuse it too); the copy then has no config, as before.
 */
export function sandboxRepositoryConfig(realGitDir: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(realGitDir, "config"), "utf8");
  } catch {
    return null; // No config (or unreadable): the copy goes without one, and git inside falls back to its defaults.
  }
  try {
    return formatGitConfig(sandboxRepositoryEntries(parseGitConfig(text)));
  } catch {
    return null; // A file git itself would refuse: nothing of it is shown.
  }
}

/**
 * The global config of a command's home: the owner's identity as git resolves it for this workspace (repository,
 * includes, global file), so `git commit` inside records the same author as outside; hooks off, since a command's
 * git must not run the repository's hooks (husky's, say) any more than Pencil's does.
 */
export function sandboxGlobalConfig(
  workspaceRoot: string,
  parent: Record<string, string | undefined> = process.env,
): string {
  // Read again only when a file it comes from changed: each command's scratch asks, and git takes a few ms to start.
  const key = configFiles(workspaceRoot, parent).map(stamp).join("\0");
  const cached = identityCache.get(workspaceRoot);
  if (cached?.key === key) return cached.text;
  const entries: GitConfigEntry[] = [];
  for (const [name, value] of gitIdentity(workspaceRoot, parent))
    entries.push({ section: "user", subsection: null, name, value });
  entries.push({ section: "core", subsection: null, name: "hookspath", value: "/dev/null" });
  const text = formatGitConfig(entries);
  identityCache.set(workspaceRoot, { key, text });
  return text;
}

const identityCache = new Map<string, { key: string; text: string }>();

/** user.name and user.email as git resolves them in `dir`, in one git process. */
function gitIdentity(dir: string, parent: Record<string, string | undefined>): [string, string][] {
  const out = gitConfigValue(dir, "--get-regexp", parent, "^user\\.(name|email)$");
  const found: [string, string][] = [];
  for (const line of (out ?? "").split("\n")) {
    const m = /^user\.(name|email) (.*)$/.exec(line);
    if (m) found.push([m[1]!, m[2]!]);
  }
  // The last of each wins, as in git (a repository's own over the global one).
  return [...new Map(found)];
}

/** The files an identity is read from, as git finds them: the global ones and the repository's. */
function configFiles(dir: string, parent: Record<string, string | undefined>): string[] {
  const home = parent.HOME ?? "";
  const xdg = parent.XDG_CONFIG_HOME || join(home, ".config");
  return [
    parent.GIT_CONFIG_GLOBAL ?? join(home, ".gitconfig"),
    join(xdg, "git", "config"),
    join(dir, ".git", "config"),
  ];
}

function stamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return "-"; // Absent: a file made later changes the stamp.
  }
}
