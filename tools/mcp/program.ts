import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";

/**
 * What a stdio MCP server's command line runs, found on the disk before it starts: the program's files (whose
 * content an approval is bound to), the directories it needs to see (its package and that package's dependency
 * tree), and, for `npx PKG`, the package's bin in the npx cache.
 */

/** The program a command names: the file itself (for `node`, the interpreter), looked up on PATH when bare; null when not found. */
export function resolveCommand(command: string, path: string): string | null {
  if (command.includes("/")) return isAbsolute(command) && isExecutableFile(command) ? command : null;
  for (const dir of path.split(":")) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, command);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/** An `npx` command resolved in the npx cache: the package's bin, run directly, and the install directory it lives in. */
export interface NpxLaunch {
  /** The package spec as written (`@scope/pkg`, `pkg@1`). */
  spec: string;
  /** The bin's path in the cache's install directory (`<cache>/_npx/<hash>/node_modules/.bin/<name>`). */
  bin: string;
  /** The install directory (`<cache>/_npx/<hash>`): its node_modules is the package's dependency tree. */
  installDir: string;
  /** The server's own arguments (what follows the package spec). */
  args: string[];
}

/** The npx cache of `env` (npm's `cache` setting, else ~/.npm) as npm itself finds it, below `home`. */
export function npmCacheDir(env: Record<string, string | undefined>, home: string): string {
  return env.npm_config_cache || env.NPM_CONFIG_CACHE || join(home, ".npm");
}

/**
 * `npx [-y|--yes] [-p PKG|--package=PKG] PKG [args…]` (or `npm exec … -- PKG args`) resolved in the npx cache,
 * the way npx names its install directories (the first 16 hex digits of the SHA-512 of the sorted package
 * specs); null when the command is not npx, or the package is not installed there.
 */
export function npxFromCache(command: string, args: readonly string[], cacheDir: string): NpxLaunch | null {
  const name = basename(command);
  let rest = [...args];
  if (name === "npm" && (rest[0] === "exec" || rest[0] === "x")) rest = rest.slice(1);
  else if (name !== "npx") return null;
  const packages: string[] = [];
  let i = 0;
  for (; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === "--") {
      i++;
      break;
    }
    if (a === "-y" || a === "--yes" || a === "-q" || a === "--quiet" || a === "--no-install") continue;
    if (a === "-p" || a === "--package") {
      const value = rest[++i];
      if (value === undefined) return null;
      packages.push(value);
      continue;
    }
    if (a.startsWith("--package=")) {
      packages.push(a.slice("--package=".length));
      continue;
    }
    // Any other option (a registry, a cache) changes what npx would run: leave it to npx itself.
    if (a.startsWith("-")) return null;
    break;
  }
  const first = rest[i];
  if (first === undefined) return null;
  const specs = packages.length > 0 ? packages : [first];
  const hash = createHash("sha512")
    .update([...specs].sort((a, b) => a.localeCompare(b, "en")).join("\n"))
    .digest("hex")
    .slice(0, 16);
  const installDir = join(cacheDir, "_npx", hash);
  // With --package, the first word is the bin to run; else it is the package, whose bin npx picks.
  const pkgName = specName(specs[0]!);
  if (pkgName === null) return null;
  const pkgDir = join(installDir, "node_modules", pkgName);
  const manifest = readJson(join(pkgDir, "package.json"));
  if (!manifest) return null;
  const version = typeof manifest.version === "string" ? manifest.version : "";
  const range = specs[0]!.slice(pkgName.length + 1);
  if (range && !satisfies(version, range)) return null;
  const binName = packages.length > 0 ? first : binOf(manifest, pkgName);
  if (!binName) return null;
  const bin = join(installDir, "node_modules", ".bin", binName);
  if (!isExecutableFile(bin)) return null;
  return { spec: specs[0]!, bin, installDir, args: rest.slice(i + 1) };
}

/** The package name of an npm spec (`@scope/pkg@1` → `@scope/pkg`); null for what is not a registry name (a path, a URL). */
function specName(spec: string): string | null {
  const m = /^((?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*)(?:@.*)?$/i.exec(spec);
  return m ? m[1]! : null;
}

/** True when `version` satisfies the spec's version part (a tag like `latest` is taken as what is installed). */
function satisfies(version: string, range: string): boolean {
  if (/^[a-z][\w.-]*$/i.test(range) && !/^v?\d/.test(range)) return true;
  try {
    return Bun.semver.satisfies(version, range);
  } catch {
    // A range Bun cannot parse is not met: the program is then not taken for that package.
    return false;
  }
}

/** The bin npx runs for a package: its only one, else the one named after the package (without its scope). */
function binOf(manifest: Record<string, unknown>, pkgName: string): string | null {
  const bare = pkgName.split("/").pop()!;
  const bin = manifest.bin;
  if (typeof bin === "string") return bare;
  if (!bin || typeof bin !== "object") return null;
  const names = Object.keys(bin);
  if (names.length === 1) return names[0]!;
  return names.includes(bare) ? bare : null;
}

/**
 * The directories a program file needs to see: its package (the nearest package.json at or above it, below `home`),
 * and every package its dependencies resolve to the way Node finds them (node_modules at each level up the tree,
 * links followed), with the directory holding a linked dependency (pnpm's `.pnpm/x/node_modules`); a file outside any
 * package gives its own directory. A Python virtual environment (`…/venv/bin/python`, by its pyvenv.cfg) gives the
 * environment's directory.
 */
export function programDirs(file: string, home: string | null): string[] {
  const out = new Set<string>();
  const venv = dirname(dirname(file));
  if (basename(dirname(file)) === "bin" && existsSync(join(venv, "pyvenv.cfg"))) out.add(venv);
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    // A program file that does not resolve has no package tree to show: only what was found so far.
    return [...out];
  }
  const start = isDirectory(real) ? real : dirname(real);
  const pkg = packageRoot(start, home);
  if (pkg === null) {
    out.add(start);
    return [...out];
  }
  const queue = [pkg];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const dir = queue.pop()!;
    if (seen.has(dir)) continue;
    seen.add(dir);
    out.add(dir);
    const manifest = readJson(join(dir, "package.json"));
    if (!manifest) continue;
    const names = new Set<string>();
    for (const field of ["dependencies", "optionalDependencies", "peerDependencies"]) {
      const deps = manifest[field];
      if (deps && typeof deps === "object") for (const n of Object.keys(deps)) names.add(n);
    }
    for (const n of names) {
      const found = findDependency(dir, n);
      if (!found) continue;
      // Node looks the name up where the link is (pnpm's .pnpm/<pkg>/node_modules): that directory is needed too.
      if (found.linked) out.add(dirname(found.lexical));
      queue.push(found.real);
    }
  }
  return [...out];
}

/** The nearest directory at or above `dir` with a package.json, stopping below `home` and `/`. */
function packageRoot(dir: string, home: string | null): string | null {
  for (let d = dir; d !== "/" && d !== home; d = dirname(d)) if (existsSync(join(d, "package.json"))) return d;
  return null;
}

/** Where Node finds package `name` from a module in `dir`: `<ancestor>/node_modules/<name>`, nearest first. */
function findDependency(dir: string, name: string): { lexical: string; real: string; linked: boolean } | null {
  for (let d = dir; ; d = dirname(d)) {
    if (basename(d) !== "node_modules") {
      const lexical = join(d, "node_modules", name);
      let st;
      try {
        st = lstatSync(lexical);
      } catch {
        // No such directory at this level: Node would look one level up, and so does this search.
        st = null;
      }
      if (st) {
        try {
          return { lexical, real: realpathSync(lexical), linked: st.isSymbolicLink() };
        } catch {
          return null; // a dangling link: Node would not find it either
        }
      }
    }
    if (d === "/") return null;
  }
}

/**
 * The files a command runs, as named (links not resolved, so a virtual environment's `bin/python` stays one): the
 * program the command names, and every absolute argument that is a file. A proposal's approval is bound to their content.
 */
export function programFiles(command: string, args: readonly string[], path: string): string[] {
  const files = new Set<string>();
  const program = resolveCommand(command, path);
  if (program) files.add(program);
  for (const a of args) if (isAbsolute(a) && isFile(a)) files.add(a);
  return [...files];
}

const hashes = new Map<string, { key: string; sha256: string }>();

/** The SHA-256 of a file's content (remembered while its size, times and inode stay the same); null when it cannot be read. */
export function fileSha256(path: string): string | null {
  let st;
  try {
    st = statSync(path);
  } catch {
    // No such file: there is no content to bind an approval to, and the caller says so.
    return null;
  }
  const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  const known = hashes.get(path);
  if (known?.key === key) return known.sha256;
  try {
    const sha256 = createHash("sha256").update(readFileSync(path)).digest("hex");
    hashes.set(path, { key, sha256 });
    return sha256;
  } catch {
    // Unreadable: no hash, so the approval cannot bind to it and the caller says so.
    return null;
  }
}

function readJson(path: string): Record<string, unknown> | null {
  try {
    const data = JSON.parse(readFileSync(path, "utf8"));
    return data && typeof data === "object" ? data : null;
  } catch {
    // Missing or not JSON: no package metadata, as Node would find none either.
    return null;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    // Missing or unreadable: not a file a server could run.
    return false;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    // Missing or unreadable: not a directory to show.
    return false;
  }
}

function isExecutableFile(p: string): boolean {
  if (!isFile(p)) return false;
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    // Not executable by this user: not a program a server could run.
    return false;
  }
}
