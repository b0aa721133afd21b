import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { embeddedPath } from "../core/embedded-files.ts";

/**
 * Copies the demo's workspace (examples/demo) to `dest`: from this folder, or from the copy the single executable
 * carries. File by file, since the executable's embedded files can be listed and read but not copied as a tree.
 */
export function copyDemoWorkspace(dest: string): void {
  const source = embeddedPath("demoWorkspace") ?? join(import.meta.dir, "demo");
  for (const rel of readdirSync(source, { recursive: true, encoding: "utf8" }).sort()) {
    const from = join(source, rel);
    if (!statSync(from).isFile()) continue;
    mkdirSync(dirname(join(dest, rel)), { recursive: true });
    writeFileSync(join(dest, rel), readFileSync(from));
  }
}
