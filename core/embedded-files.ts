import { basename, join } from "node:path";
import { STANDALONE } from "./installation.ts";

/**
 * Files Pencil reads at run time that its libraries find beside their own code: from source they stay where npm put
 * them; the single executable carries them (scripts/build-binary.ts embeds exactly these, given by their paths from the
 * repository root) and Pencil hands them to the libraries itself.
 */
export const EMBEDDED_FILES = {
  /** Postgres compiled to WebAssembly, for the brain. */
  pgliteWasm: "node_modules/@electric-sql/pglite/dist/pglite.wasm",
  /** Postgres's share directory (catalog, time zones) that PGlite unpacks at start. */
  pgliteData: "node_modules/@electric-sql/pglite/dist/pglite.data",
  /** The pgvector extension's bundle. */
  pgvector: "node_modules/@electric-sql/pglite/dist/vector.tar.gz",
  /** tree-sitter's runtime in WebAssembly, for the shell parser. */
  treeSitterWasm: "node_modules/web-tree-sitter/tree-sitter.wasm",
  /** The bash grammar, for the shell parser. */
  bashGrammar: "node_modules/tree-sitter-bash/tree-sitter-bash.wasm",
  /** The workspace `pencil demo` copies. */
  demoWorkspace: "examples/demo",
  /** The review page's own script and styles (`pencil review --web`). */
  reviewAssets: "modes/web/assets",
  /** highlight.js's colour themes the review page serves, light and dark. */
  syntaxLight: "node_modules/highlight.js/styles/github.css",
  syntaxDark: "node_modules/highlight.js/styles/github-dark.css",
} as const;

/**
 * The path of an embedded file inside the single executable, null from source. Bun embeds a file or folder given as
 * an asset under its last name, beside the entry point (so these names must differ).
 */
export function embeddedPath(name: keyof typeof EMBEDDED_FILES): string | null {
  return STANDALONE ? join(import.meta.dir, basename(EMBEDDED_FILES[name])) : null;
}
