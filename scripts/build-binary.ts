// `npm run build:binary [-- --target=bun-<os>-<arch>] [--outfile=PATH]`: the single executable
// dist/pencil-<os>-<arch> (or PATH), carrying Bun, Pencil's code as bytecode, and the files it reads at run time
// (core/embedded-files.ts). Without --target it is built for this machine; with one, Bun fetches that platform's
// runtime once (the release workflow builds all four).
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { EMBEDDED_FILES } from "../core/embedded-files.ts";

/** The platforms the release builds: Bun's compile target → the name in dist/. */
export const TARGETS: Record<string, string> = {
  "bun-linux-x64": "linux-x64",
  "bun-linux-arm64": "linux-arm64",
  "bun-darwin-x64": "darwin-x64",
  "bun-darwin-arm64": "darwin-arm64",
};

const root = join(import.meta.dir, "..");
const given = process.argv.find((a) => a.startsWith("--target="))?.slice("--target=".length);
const host = `bun-${process.platform}-${process.arch}`;
const target = given ?? host;
const name = TARGETS[target];
if (!name) {
  console.error(`build:binary: unknown target ${target}; use one of ${Object.keys(TARGETS).join(", ")}`);
  process.exit(2);
}
const outfile = resolve(
  process.argv.find((a) => a.startsWith("--outfile="))?.slice("--outfile=".length) ??
    join(root, "dist", `pencil-${name}`),
);
mkdirSync(dirname(outfile), { recursive: true });

const started = performance.now();
process.chdir(root); // the embedded files keep their paths from here, under the entry point's directory
const result = await Bun.build({
  entrypoints: ["./index.ts"],
  compile: {
    ...(given ? { target: target as Bun.Build.CompileTarget } : {}),
    outfile,
    assets: Object.values(EMBEDDED_FILES).map((p) => `./${p}`),
    // A workspace's .env or bunfig.toml must never configure Pencil (bin/pencil keeps Bun out of them from source).
    autoloadDotenv: false,
    autoloadBunfig: false,
  },
  // Bytecode spares the parse of ~1,000 modules at every start (ESM, for top-level await), and splitting keeps
  // each lazily imported command in a chunk of its own, loaded only when it runs: `--help` loads the entry alone.
  bytecode: true,
  format: "esm",
  splitting: true,
  minify: true,
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
chmodSync(outfile, 0o755);
const mib = (statSync(outfile).size / 1024 / 1024).toFixed(1);
console.log(`build:binary: ${outfile} (${mib} MiB, ${((performance.now() - started) / 1000).toFixed(1)} s)`);
