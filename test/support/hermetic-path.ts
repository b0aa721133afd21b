import { accessSync, constants } from "node:fs";
import { delimiter, dirname, join } from "node:path";

/** The variable that keeps the PATH the tests were started with (the owner's), for the tests that use its toolchains. */
export const OWNER_PATH_VARIABLE = "PENCIL_TEST_OWNER_PATH";

/** The system's program directories, in the order a default login PATH lists them. */
const SYSTEM_DIRS = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/**
 * Programs some test runs or checks for. Where the system's directories lack one, the owner's directory holding it
 * is kept, so a test that needs it runs (or is skipped) exactly as it would with the owner's whole PATH.
 */
const NEEDED = [
  "node",
  "npm",
  "npx",
  "git",
  "python3",
  "rg",
  "curl",
  "chromium",
  "bash",
  "sh",
  "zsh",
  "fish",
  "setpriv",
];

const executable = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    // Missing or not executable: not this directory.
    return false;
  }
};

/**
 * The PATH the tests run with: this Bun's directory, the system's directories, and the owner's directory of any needed
 * program the system lacks. No version manager's root is on it unless a needed program lives only there, and none of
 * the `node_modules/.bin` entries npm and npx put first: their commands are links into the checkout's node_modules, so
 * the sandbox kept that whole tree reachable and searched its ~20,000 entries for secrets at the first command of
 * every Pencil process a test started (~170 ms of CPU and ~0.5 s each); no test runs a program from there by name.
 */
export function hermeticPath(ownerPath: string): string {
  const owner = ownerPath.split(delimiter).filter(Boolean);
  const dirs = [dirname(process.execPath), ...SYSTEM_DIRS];
  for (const program of NEEDED) {
    if (dirs.some((d) => executable(join(d, program)))) continue;
    const found = owner.find((d) => executable(join(d, program)));
    if (found) dirs.push(found);
  }
  return [...new Set(dirs)].join(delimiter);
}

/** The owner's PATH as the tests were started with it (the hermetic PATH is process.env.PATH). */
export function ownerPath(): string {
  return process.env[OWNER_PATH_VARIABLE] ?? process.env.PATH ?? "/usr/bin:/bin";
}
