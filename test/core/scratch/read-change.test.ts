import { describe, expect, test } from "bun:test";
import { lstatSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DIFF_CAPS, readChange } from "../../../core/scratch/read-change.ts";
import type { EntrySig, Scratch } from "../../../core/scratch/types.ts";
import { tempDir } from "../../support/temp.ts";

/** The signature the walk records for `path`. */
function sigOf(path: string): EntrySig {
  const st = lstatSync(path);
  return {
    kind: "file",
    dev: st.dev,
    ino: st.ino,
    size: st.size,
    mode: st.mode & 0o7777,
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs,
  };
}

describe("a changed file that cannot be read back says what happened", () => {
  test("a file that vanished between the walk and the read is 'vanished', never 'over the byte limit'", () => {
    const dir = tempDir("pencil-unread-");
    writeFileSync(join(dir, "out.txt"), "written by the command\n");
    const sig = sigOf(join(dir, "out.txt"));
    rmSync(join(dir, "out.txt"));
    // Only where the copy lies is read from the scratch.
    const scratch = { dir, overlay: null } as unknown as Scratch;
    const change = readChange(scratch, "out.txt", sig, "create", 1024 * 1024, { ...DIFF_CAPS, caps: DIFF_CAPS });
    expect(change.bytes).toBeUndefined();
    expect(change.unread).toContain("it vanished after the command changed it");
  });
});
