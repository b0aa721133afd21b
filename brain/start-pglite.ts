import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PGlite, type Extension } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite/vector";
import { embeddedPath } from "../core/embedded-files.ts";

/** What the single executable hands PGlite on every start, read and compiled once per process. */
interface EmbeddedPglite {
  wasmModule: WebAssembly.Module;
  fsBundle: Blob;
  pgvector: Uint8Array;
}

let embedded: Promise<EmbeddedPglite> | null = null;

/**
 * The executable's PGlite files, once per process: the Telegram bot opens the brain for each job, and a module
 * compiled again for each start is run cold again (about 0.4 CPU-s more per open). From source PGlite keeps its own
 * compiled module the same way.
 */
function embeddedPglite(wasm: string): Promise<EmbeddedPglite> {
  embedded ??= (async () => ({
    wasmModule: await WebAssembly.compile(readFileSync(wasm)),
    fsBundle: new Blob([readFileSync(embeddedPath("pgliteData")!)]),
    pgvector: readFileSync(embeddedPath("pgvector")!),
  }))();
  embedded.catch(() => {
    embedded = null;
  });
  return embedded;
}

/**
 * Starts PGlite with pgvector, on `dataDir` or in memory; `image` (a `dumpDataDir` tarball) is loaded into a new
 * database instead of creating it empty. From source PGlite finds its WebAssembly, its data bundle and the extension
 * beside its own code. The single executable hands it the copies it carries: PGlite takes the WebAssembly and the
 * bundle as given, but reads an extension only from a file on disk through a stream, which the executable's embedded
 * files do not serve, so pgvector's 44 KB bundle is written to a private temporary folder for the start and removed
 * after it.
 */
export async function startPglite(dataDir?: string, image?: Blob): Promise<PGlite> {
  const where = { ...(dataDir ? { dataDir } : {}), ...(image ? { loadDataDir: image } : {}) };
  const wasm = embeddedPath("pgliteWasm");
  if (wasm === null) return PGlite.create({ ...where, extensions: { vector } });
  const files = await embeddedPglite(wasm);
  const temp = mkdtempSync(join(tmpdir(), "pencil-pgvector-"));
  try {
    const bundle = join(temp, "vector.tar.gz");
    writeFileSync(bundle, files.pgvector, { mode: 0o600 });
    const embeddedVector: Extension = {
      name: "pgvector",
      setup: async (_pg, emscriptenOpts) => ({ emscriptenOpts, bundlePath: pathToFileURL(bundle) }),
    };
    return await PGlite.create({
      ...where,
      wasmModule: files.wasmModule,
      fsBundle: files.fsBundle,
      extensions: { vector: embeddedVector },
    });
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
