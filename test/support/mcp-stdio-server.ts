import { join } from "node:path";
import { tempDir } from "./temp.ts";

const SOURCE = join(import.meta.dir, "../fixtures/mcp/stdio-server.ts");

/**
 * The test stdio MCP server (test/fixtures/mcp/stdio-server.ts) bundled into one file in a temporary directory of its
 * own, with its SDK and zod inside it: the path to run it with `bun`. Run from this repository, the server's package
 * would be the whole checkout, and every start would search it and its node_modules (some 18,000 entries) for secrets
 * and hard links to them, twice; bundled, its package is the one file. The real filesystem server of
 * mcp-filesystem.test.ts is run from node_modules, where its package tree is searched as an owner's would be.
 */
export async function bundledStdioServer(): Promise<string> {
  const dir = tempDir("pencil-mcp-fixture-");
  const built = await Bun.build({ entrypoints: [SOURCE], outdir: dir, target: "bun" });
  if (!built.success) throw new Error(`bundling ${SOURCE} failed:\n${built.logs.join("\n")}`);
  return join(dir, "stdio-server.js");
}
