// Preloaded by bunfig.toml: hooks here apply to the whole run, after every test file.
import { afterAll } from "bun:test";
import { removeTempDirs } from "./temp.ts";

afterAll(removeTempDirs);
