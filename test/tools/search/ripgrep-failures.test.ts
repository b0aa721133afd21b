import { describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSearchTool } from "../../../tools/search.ts";
import { tempDir, writeTree } from "../../support/temp.ts";
import { toolContext } from "../../support/tool-context.ts";

// A broken ripgrep must never be answered silently by the JavaScript engine: the result says what failed.
// Only an rg that is not there falls back without a word. Each fake `rg` is a real executable.

function fakeRg(script: string): string {
  const path = join(tempDir("pencil-fake-rg-"), "rg");
  writeFileSync(path, `#!/bin/sh\n${script}\n`);
  chmodSync(path, 0o755);
  return path;
}

const root = tempDir("pencil-search-");
writeTree(root, { "a.txt": "one hit\n", "b.txt": "nothing\n" });
const search = (rgPath: string | null, pattern = "hit") =>
  toolContext(root).run(createSearchTool({ rgPath }), { pattern });

describe("search when ripgrep fails", () => {
  test("rg not installed: the built-in search answers, with no note", async () => {
    expect(await search(join(root, "no-such-rg"))).toBe("a.txt:1:one hit");
    expect(await search(null)).toBe("a.txt:1:one hit");
  });

  test("rg exits 2 with an error: the answer is the built-in search's, and the error is in the result", async () => {
    const rg = fakeRg('echo "rg: error: something inside rg broke" >&2; exit 2');
    const out = await search(rg);
    expect(out).toStartWith("a.txt:1:one hit\n[");
    expect(out).toContain(`ripgrep (${rg}) failed with exit code 2: rg: error: something inside rg broke`);
    expect(out).toContain("the built-in search answered instead");
  });

  test("rg crashes (killed by a signal): said, even when nothing matches", async () => {
    const rg = fakeRg("kill -SEGV $$");
    const hit = await search(rg);
    expect(hit).toStartWith("a.txt:1:one hit\n");
    expect(hit).toContain(`ripgrep (${rg}) was killed by SIGSEGV`);
    const none = await search(rg, "absent-word");
    expect(none).toStartWith("No matches for");
    expect(none).toContain("was killed by SIGSEGV");
  });

  test("rg that cannot be started (not executable, or its interpreter missing): said", async () => {
    const notExec = join(tempDir("pencil-fake-rg-"), "rg");
    writeFileSync(notExec, "#!/bin/sh\nexit 0\n");
    chmodSync(notExec, 0o644);
    expect(await search(notExec)).toContain(`ripgrep (${notExec}) could not be run:`);
    const noInterp = join(tempDir("pencil-fake-rg-"), "rg");
    writeFileSync(noInterp, "#!/no/such/interpreter\n");
    chmodSync(noInterp, 0o755);
    expect(await search(noInterp)).toContain(`ripgrep (${noInterp}) could not be run:`);
  });
});
