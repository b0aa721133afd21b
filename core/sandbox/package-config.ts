import { existsSync, lstatSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { smallFileBytes } from "../read-small-file.ts";
import { isInside, realPathLoose } from "../workspace.ts";
import { looksLikeCredential } from "../staging/flags.ts";
import { stagedInside } from "../scratch/make.ts";
import { entrySig } from "../scratch/record.ts";
import type { StagedEntry } from "../staging/overlay.ts";
import type { Scratch } from "../scratch/types.ts";
import { looksSecret, relativeToHome } from "./command-env.ts";
import type { Hiding } from "./hiding.ts";
import { isFilteredSettingsName } from "../policy/settings-names.ts";

/**
 * The owner's settings files (relative to home) a command's programs read from their HOME, which is the scratch's:
 * package managers' (npm, yarn, pnpm, pip, uv) and version managers' choice of version (asdf, mise, pyenv, nodenv,
 * rbenv, nvm). Each is copied there with every credential line removed.
 */
const HOME_SETTINGS: readonly string[] = [
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".config/pnpm/rc",
  ".config/pip/pip.conf",
  ".pip/pip.conf",
  ".pypirc",
  ".config/uv/uv.toml",
  ".tool-versions",
  ".config/mise/config.toml",
  ".python-version",
  ".node-version",
  ".nvmrc",
  ".ruby-version",
];

/** Largest settings file copied: anything bigger is not a hand-written settings file. */
const MAX_SETTINGS_BYTES = 256 * 1024;

/** A URL with a user name or password in it (https://user:pass@host, https://TOKEN@host): the scheme, then the rest. */
const URL_USERINFO = /([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@"']+@/gi;

/**
 * `text` (an .npmrc, .yarnrc(.yml), pip.conf, .pypirc, pnpm rc, uv.toml) without its credentials: a line whose key
 * names one (`_authToken`, `//host/:_authToken`, `_auth`, `_password`, `npmAuthToken`, `npmAuthIdent`, `password`,
 * `username`, `token`) or that holds anything shaped like a token goes; a URL keeps its host and path but loses the
 * user and password in it, so an index or registry setting still points where the owner's does.
 */
export function withoutCredentials(text: string): string {
  const kept: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(URL_USERINFO, "$1");
    const key = /^\s*["']?([^=:\s"']+(?::[^=:\s"']+)*)["']?\s*[=:]/.exec(line)?.[1] ?? "";
    // `//registry.example.com/:_authToken`: the setting's own name is after the last colon or slash.
    const name = key.split(/[:/]/).pop() ?? "";
    if (
      (name !== "" &&
        !/^(always-auth|npmAlwaysAuth)$/i.test(name) &&
        (looksSecret(name) || /^_?(auth|password|username)$/i.test(name))) ||
      looksLikeCredential(line)
    )
      continue;
    kept.push(line);
  }
  return kept.join("\n");
}

/** Reads a settings file to copy: a regular file (not a link) of at most MAX_SETTINGS_BYTES, else null. */
function readSettings(path: string): string | null {
  // Missing or unreadable: no settings from it reach the command.
  return smallFileBytes(path, MAX_SETTINGS_BYTES)?.toString("utf8") ?? null;
}

/**
 * A workspace settings file as the staged view has it: the staged bytes (the model's edit of a .yarnrc.yml), else the
 * file on disk when it is a regular file itself (a link is never followed: it could lead anywhere); null otherwise.
 */
function readWorkspaceSettings(s: Scratch, rel: string, staged: ReadonlyMap<string, StagedEntry>): string | null {
  const entry = staged.get(rel);
  if (entry === undefined) return readSettings(join(s.ws.root, rel));
  if (!entry.after || entry.after.bytes.length > MAX_SETTINGS_BYTES) return null;
  return new TextDecoder().decode(entry.after.bytes);
}

/** What placeSettings placed: home files copied, workspace files shown (relative paths). */
export interface PlacedSettings {
  home: string[];
  workspace: string[];
}

/**
 * Where XDG_CONFIG_HOME is, relative to home, when the owner's environment puts it inside home (else `.config`): the
 * command's copy goes to the same place below its own HOME (planCommandEnv moves the variable with HOME).
 */
function configHome(realHome: string, env: Record<string, string | undefined>): string {
  const rel = env.XDG_CONFIG_HOME ? relativeToHome(realHome, env.XDG_CONFIG_HOME) : null;
  return rel === null ? ".config" : rel;
}

/**
 * Places the owner's settings (HOME_SETTINGS below `realHome`, filtered; those of `.config` read from XDG_CONFIG_HOME
 * where `env` moves it inside home) in the command's HOME, and, in the namespace sandbox, a filtered copy of each
 * WORKSPACE_SETTINGS file the command's visibility left out, bound read-only over its path (a shared directory's is
 * bound in place of its mask): in a copy-on-write scratch the hidden file is then not removed from the command's view
 * but covered; in a copy an empty file is made for the bind and recorded as it is, so the command's changes never
 * include it.
 */
export function placeSettings(
  s: Scratch,
  realHome: string,
  env: Record<string, string | undefined> = {},
): PlacedSettings {
  const placed: PlacedSettings = { home: [], workspace: [] };
  const config = configHome(realHome, env);
  for (const rel of HOME_SETTINGS) {
    const at = rel.startsWith(".config/") ? join(config, rel.slice(".config/".length)) : rel;
    const text = readSettings(join(realHome, at));
    if (text === null) continue;
    const to = join(s.home, at);
    mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
    writeFileSync(to, withoutCredentials(text), { mode: 0o600 });
    placed.home.push(at);
  }
  if (s.share !== "namespace") return placed;
  const ov = s.overlay;
  const found = new Set<string>();
  if (ov) for (const rel of ov.hidden) if (isFilteredSettingsName(basename(rel))) found.add(rel);
  for (const rel of s.hiddenFiles ?? []) found.add(rel);
  const staged = new Map<string, StagedEntry>();
  for (const { rel, entry } of stagedInside(s.ws, s.fs)) {
    if (!isFilteredSettingsName(basename(rel))) continue;
    staged.set(rel, entry);
    if (entry.after) found.add(rel);
  }
  let n = 0;
  const bindFiltered = (text: string, target: string) => {
    const source = join(s.root, "settings", String(n++));
    mkdirSync(dirname(source), { recursive: true, mode: 0o755 });
    writeFileSync(source, withoutCredentials(text), { mode: 0o444 });
    s.mounts.push({ source, target });
    s.hidden = Math.max(0, s.hidden - 1);
  };
  for (const rel of [...found].sort()) {
    const text = readWorkspaceSettings(s, rel, staged);
    if (text === null) continue;
    if (ov) {
      // Over a file the overlay shows from the workspace, or over the placeholder laid for one the agent created.
      if (!ov.placeholders?.includes(rel)) {
        if (!ov.hidden.includes(rel) || ov.baseline?.get(rel)?.kind === "whiteout") continue;
        ov.hidden = ov.hidden.filter((h) => h !== rel);
      }
    } else {
      const at = join(s.dir, rel);
      try {
        // A settings file the agent created in a folder that is not on disk yet (sub/.npmrc): its folder, as staged.
        // Made only where no link leads out of the copy: Pencil makes it, unconfined.
        const parent = dirname(at);
        if (
          staged.get(rel)?.after &&
          !existsSync(parent) &&
          isInside(realPathLoose(s.dir).real, realPathLoose(parent).real)
        )
          mkdirSync(parent, { recursive: true, mode: 0o755 });
        writeFileSync(at, "", { mode: 0o644, flag: "wx" });
      } catch {
        continue; // something is there already (the policy did not hide it), or its directory is not: left as it is
      }
      // Recorded as made: unchanged after the run (the bind is gone with the namespace), it is no change of the command's.
      s.baseline.set(rel, entrySig(lstatSync(at)));
    }
    bindFiltered(text, join(s.dir, rel));
    placed.workspace.push(rel);
  }
  // A shared directory (a copy's node_modules, .venv) is bound whole, its hidden entries masked: a settings file's
  // mask (a virtualenv's pip.conf) becomes its filtered copy.
  for (const sd of s.shared) {
    const at = join(s.dir, sd.rel);
    sd.masks = sd.masks.filter((m) => {
      if (m.dir || !isFilteredSettingsName(basename(m.path))) return true;
      const text = readSettings(join(sd.real, relative(at, m.path)));
      if (text === null) return true;
      bindFiltered(text, m.path);
      placed.workspace.push(relative(s.dir, m.path));
      return false;
    });
  }
  return placed;
}

/**
 * The settings files outside the workspace and home that the sandbox masks (hiding.settings: a pip.conf in /etc or in
 * a toolchain root, npm's global npmrc), shown again as their credential-free copies, read-only, bound over the mask:
 * pip keeps its certificates and index, npm its registry and CA file. One that cannot be read stays masked.
 */
export function showFilteredSettings(s: Scratch, hiding: Hiding): void {
  let n = 0;
  for (const target of hiding.settings ?? []) {
    const text = readSettings(target);
    if (text === null) continue;
    const source = join(s.root, "settings", `shown-${n++}`);
    mkdirSync(dirname(source), { recursive: true, mode: 0o755 });
    writeFileSync(source, withoutCredentials(text), { mode: 0o444 });
    (s.filteredOver ??= []).push({ source, target });
  }
}
