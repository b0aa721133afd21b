import { resolve, sep } from "node:path";
import { STANDALONE } from "./standalone.ts";

export { STANDALONE };

/** How this copy of Pencil came to the machine: a git clone, the npm package, a bunx run, or the single executable. */
type InstallKind = "clone" | "npm package" | "bunx" | "binary";

/**
 * Pencil's install directory (the repository root, or the installed package's folder), whose `.env` files hold keys
 * commands never get; null in the single executable, which has no folder of its own and reads no `.env` beside it.
 */
export const INSTALL_DIR: string | null = STANDALONE ? null : resolve(import.meta.dir, "..");

/** What `pencil --version` says about where this Pencil lives. */
export interface Installation {
  kind: InstallKind;
  /** The install directory, or the executable itself for the binary. */
  where: string;
}

/**
 * Tells the kinds apart by where the files are: bunx unpacks into a `bunx-<uid>-…` (or `.bunx-<uid>`) folder of its
 * own, npm (global or local) into a `node_modules` folder; anything else is a checkout.
 */
export function installation(dir: string | null = INSTALL_DIR, execPath: string = process.execPath): Installation {
  if (dir === null) return { kind: "binary", where: execPath };
  const parts = dir.split(sep);
  if (parts.some((p) => /^\.?bunx-\d+(-|$)/.test(p))) return { kind: "bunx", where: dir };
  if (parts.includes("node_modules")) return { kind: "npm package", where: dir };
  return { kind: "clone", where: dir };
}

/** The line `pencil --version` prints: the version, then how and where this Pencil was installed. */
export function versionLine(version: string, where: Installation = installation()): string {
  return `pencil ${version} (${where.kind}, ${where.where})\n`;
}
