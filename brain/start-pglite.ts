import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PGlite, type Extension } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite/vector";
import { embeddedPath } from "../core/embedded-files.ts";

/**
 * Starts PGlite with pgvector, on `dataDir` or in memory. From source PGlite finds its WebAssembly, its data bundle
 * and the extension beside its own code. The single executable hands it the copies it carries: PGlite takes the
 * WebAssembly and the bundle as given, but reads an extension only from a file on disk through a stream, which the
 * executable's embedded files do not serve, so pgvector's 44 KB bundle is written to a private temporary folder for
 * the start and removed after it.
 */
export async function startPglite(dataDir?: string): Promise<PGlite> {
  const wasm = embeddedPath("pgliteWasm");
  if (wasm === null) return PGlite.create({ ...(dataDir ? { dataDir } : {}), extensions: { vector } });
  const temp = mkdtempSync(join(tmpdir(), "pencil-pgvector-"));
  try {
    const bundle = join(temp, "vector.tar.gz");
    writeFileSync(bundle, readFileSync(embeddedPath("pgvector")!), { mode: 0o600 });
    const embeddedVector: Extension = {
      name: "pgvector",
      setup: async (_pg, emscriptenOpts) => ({ emscriptenOpts, bundlePath: pathToFileURL(bundle) }),
    };
    return await PGlite.create({
      ...(dataDir ? { dataDir } : {}),
      wasmModule: await WebAssembly.compile(readFileSync(wasm)),
      fsBundle: new Blob([readFileSync(embeddedPath("pgliteData")!)]),
      extensions: { vector: embeddedVector },
    });
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
