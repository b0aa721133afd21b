// Preloaded by bunfig.toml: hooks here apply to the whole run, after every test file.
import { afterAll } from "bun:test";
import { removeTempDirs } from "./temp.ts";

// Hundreds of temporary trees on a shared two-core machine can take longer than a hook's default 5 s to remove.
afterAll(removeTempDirs, { timeout: 120_000 });
