// Preloaded by bunfig.toml into every test process: hooks here apply to the whole run, after every test file.
import { afterAll } from "bun:test";
import { hermeticPath, OWNER_PATH_VARIABLE } from "./hermetic-path.ts";
import { removeTempDirs } from "./temp.ts";
import { shareTranspilerCache } from "./transpiler-cache.ts";

// The tests are about Pencil, not about the toolchains of the machine they run on: every command they start gets the
// system's directories and this Bun's on PATH, so no sandboxed command searches the owner's ~/.pyenv or ~/.cargo for
// secrets first. The owner's own PATH stays in PENCIL_TEST_OWNER_PATH for the tests that use those toolchains on purpose.
if (process.env[OWNER_PATH_VARIABLE] === undefined) {
  process.env[OWNER_PATH_VARIABLE] = process.env.PATH ?? "";
  process.env.PATH = hermeticPath(process.env.PATH ?? "");
}

shareTranspilerCache();

// Hundreds of temporary trees on a shared two-core machine can take longer than a hook's default 5 s to remove.
afterAll(removeTempDirs, { timeout: 120_000 });
