// Which files are package managers' settings, shown to commands without their credentials: by name anywhere, and
// npm's global settings by path (they have no dot, and nothing else about them says what they are).

/**
 * Names of the package managers' settings files that hold credentials as often as not (npm's, yarn's, pip's, twine's):
 * wherever one is in the workspace (a virtualenv's own pip.conf included), a command sees it with those lines removed,
 * read-only, at its own path, never as one of its changes. The policy hides every one of them from the model.
 */
const SETTINGS_NAMES: readonly string[] = [".npmrc", ".yarnrc", ".yarnrc.yml", "pip.conf", "pip.ini", ".pypirc"];

/**
 * npm's global settings (`$PREFIX/etc/npmrc`) for the prefixes a system's npm has: Debian's /etc, /usr and /usr/local.
 * A command sees each with its credentials removed, as the files of SETTINGS_NAMES.
 */
export const GLOBAL_NPMRC: readonly string[] = ["/etc/npmrc", "/usr/etc/npmrc", "/usr/local/etc/npmrc"];

/** True for a file name (one path component) of SETTINGS_NAMES: never copied into a command's scratch as it is. */
export function isFilteredSettingsName(name: string): boolean {
  return SETTINGS_NAMES.includes(name);
}

/** True for a settings file outside the workspace that a command sees filtered: a SETTINGS_NAMES name, or GLOBAL_NPMRC. */
export function isFilteredSettingsPath(path: string): boolean {
  const slash = path.lastIndexOf("/");
  return isFilteredSettingsName(path.slice(slash + 1)) || GLOBAL_NPMRC.includes(path);
}
