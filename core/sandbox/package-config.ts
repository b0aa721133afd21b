import { lstatSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { looksLikeCredential } from "../flags.ts";
import type { Scratch } from "../scratch/types.ts";
import { looksSecret } from "./command-env.ts";

/**
 * The owner's settings files (relative to home) a command's programs read from their HOME, which is the scratch's:
 * package managers' (npm, yarn, pnpm, pip, uv) and version managers' choice of version (asdf, mise, pyenv, nodenv,
 * rbenv, nvm). Each is copied there with every credential line removed.
 */
export const HOME_SETTINGS: readonly string[] = [
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".config/pnpm/rc",
  ".config/pip/pip.conf",
  ".pip/pip.conf",
  ".config/uv/uv.toml",
  ".tool-versions",
  ".config/mise/config.toml",
  ".python-version",
  ".node-version",
  ".nvmrc",
  ".ruby-version",
];

/**
 * The workspace's settings files the policy hides because they hold credentials as often as not, shown to a command
 * with those lines removed: read-only, at their own path, never part of the command's changes.
 */
export const WORKSPACE_SETTINGS: readonly string[] = [".npmrc"];

/** Largest settings file copied: anything bigger is not a hand-written settings file. */
const MAX_SETTINGS_BYTES = 256 * 1024;

/** A URL with a user name or password in it (https://user:pass@host, https://TOKEN@host). */
const URL_USERINFO = /[a-z][a-z0-9+.-]{0,31}:\/\/[^\s/?#@"']+@/i;

/**
 * `text` (an .npmrc, .yarnrc(.yml), pip.conf, pnpm rc, uv.toml) without the lines that carry a credential: a key
 * that names one (`_authToken`, `//host/:_authToken`, `_auth`, `_password`, `npmAuthToken`, `npmAuthIdent`,
 * `password`, `token`), a URL with a user or password in it, or anything shaped like a token.
 */
export function withoutCredentials(text: string): string {
  const kept: string[] = [];
  for (const line of text.split("\n")) {
    const key = /^\s*["']?([^=:\s"']+(?::[^=:\s"']+)*)["']?\s*[=:]/.exec(line)?.[1] ?? "";
    // `//registry.example.com/:_authToken`: the setting's own name is after the last colon or slash.
    const name = key.split(/[:/]/).pop() ?? "";
    if (
      (name !== "" &&
        !/^(always-auth|npmAlwaysAuth)$/i.test(name) &&
        (looksSecret(name) || /^_?(auth|password|username)$/i.test(name))) ||
      URL_USERINFO.test(line) ||
      looksLikeCredential(line)
    )
      continue;
    kept.push(line);
  }
  return kept.join("\n");
}

/** Reads a settings file to copy: a regular file of at most MAX_SETTINGS_BYTES, else null. */
function readSettings(path: string): string | null {
  try {
    const st = lstatSync(path);
    if (!st.isFile() || st.size > MAX_SETTINGS_BYTES) return null;
    return readFileSync(path, "utf8");
  } catch {
    // Missing or unreadable: no settings from it reach the command.
    return null;
  }
}

/** What placeSettings placed: home files copied, workspace files shown (relative paths). */
export interface PlacedSettings {
  home: string[];
  workspace: string[];
}

/**
 * Places the owner's settings (HOME_SETTINGS below `realHome`, filtered) in the command's HOME, and, in the
 * namespace sandbox, a filtered copy of each WORKSPACE_SETTINGS file the policy hid, bound read-only over its path:
 * in a copy-on-write scratch the hidden file is then not removed from the command's view but covered; in a copy an
 * empty file is made for the bind and recorded as it is, so the command's changes never include it.
 */
export function placeSettings(s: Scratch, realHome: string): PlacedSettings {
  const placed: PlacedSettings = { home: [], workspace: [] };
  for (const rel of HOME_SETTINGS) {
    const text = readSettings(join(realHome, rel));
    if (text === null) continue;
    const to = join(s.home, rel);
    mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
    writeFileSync(to, withoutCredentials(text), { mode: 0o600 });
    placed.home.push(rel);
  }
  if (s.share !== "namespace") return placed;
  for (const rel of WORKSPACE_SETTINGS) {
    const text = readSettings(join(s.ws.root, rel));
    if (text === null) continue;
    const ov = s.overlay;
    if (ov) {
      if (!ov.hidden.includes(rel) || ov.baseline?.get(rel)?.kind === "whiteout") continue;
      ov.hidden = ov.hidden.filter((h) => h !== rel);
    } else {
      const at = join(s.dir, rel);
      try {
        writeFileSync(at, "", { mode: 0o644, flag: "wx" });
      } catch {
        continue; // something is there already (the policy did not hide it): left as it is
      }
      // Recorded as made: unchanged after the run (the bind is gone with the namespace), it is no change of the command's.
      const st = lstatSync(at);
      s.baseline.set(rel, {
        kind: "file",
        dev: st.dev,
        ino: st.ino,
        size: st.size,
        mode: st.mode & 0o7777,
        mtimeMs: st.mtimeMs,
        ctimeMs: st.ctimeMs,
      });
    }
    const source = join(s.root, "settings", rel);
    mkdirSync(dirname(source), { recursive: true, mode: 0o755 });
    writeFileSync(source, withoutCredentials(text), { mode: 0o444 });
    s.mounts.push({ source, target: join(s.dir, rel) });
    s.hidden = Math.max(0, s.hidden - 1);
    placed.workspace.push(rel);
  }
  return placed;
}
