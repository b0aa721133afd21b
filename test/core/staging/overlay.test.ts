import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DiskFileOps } from "../../../core/file-ops.ts";
import { sha256 } from "../../../core/hash.ts";
import { Overlay } from "../../../core/staging/overlay.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

function setup() {
  const root = tempDir();
  writeTree(root, { "a.txt": "disk a\n", "dir/b.txt": "disk b\n" });
  return { root, overlay: new Overlay(new DiskFileOps()) };
}

describe("Overlay", () => {
  test("reads go deleted → staged → disk, and the disk is never written", () => {
    const { root, overlay } = setup();
    const a = join(root, "a.txt");
    expect(dec(overlay.readBytes(a))).toBe("disk a\n");
    overlay.writeBytes(a, enc("staged a\n"));
    expect(dec(overlay.readBytes(a))).toBe("staged a\n");
    expect(readFileSync(a, "utf8")).toBe("disk a\n");
    overlay.remove(a);
    expect(overlay.stat(a)).toBeNull();
    expect(() => overlay.readBytes(a)).toThrow(/staged for deletion/);
    expect(readFileSync(a, "utf8")).toBe("disk a\n");
  });

  test("the base is the disk state at first staging, and stays so across later stages", () => {
    const { root, overlay } = setup();
    const a = join(root, "a.txt");
    overlay.writeBytes(a, enc("one"));
    overlay.writeBytes(a, enc("two"));
    const [entry] = overlay.list();
    expect(entry!.base).toMatchObject({ exists: true, hash: sha256("disk a\n"), size: 7 });
    expect(dec(entry!.after!.bytes)).toBe("two");
  });

  test("deleting a file staged for creation drops it; delete then create is a write", () => {
    const { root, overlay } = setup();
    const fresh = join(root, "new.txt");
    overlay.writeBytes(fresh, enc("x"));
    overlay.remove(fresh);
    expect(overlay.list()).toHaveLength(0);
    const a = join(root, "a.txt");
    overlay.remove(a);
    overlay.writeBytes(a, enc("again"));
    const [entry] = overlay.list();
    expect(entry!.base.exists).toBe(true);
    expect(dec(entry!.after!.bytes)).toBe("again");
  });

  test("writing back the disk content is no change", () => {
    const { root, overlay } = setup();
    const a = join(root, "a.txt");
    overlay.writeBytes(a, enc("changed"));
    overlay.writeBytes(a, enc("disk a\n"), { mode: 0o644 });
    expect(overlay.list()).toHaveLength(0);
  });

  test("directory listings merge staged creations and hide staged deletions", () => {
    const { root, overlay } = setup();
    overlay.writeBytes(join(root, "dir/c.txt"), enc("c"));
    overlay.writeBytes(join(root, "newdir/deep/d.txt"), enc("d"));
    overlay.remove(join(root, "dir/b.txt"));
    expect(overlay.readDir(join(root, "dir")).map((d) => d.name)).toEqual(["c.txt"]);
    expect(overlay.readDir(root).map((d) => `${d.name}:${d.kind}`)).toEqual(["a.txt:file", "dir:dir", "newdir:dir"]);
    expect(overlay.stat(join(root, "newdir/deep"))?.kind).toBe("dir");
  });

  test("origins and models are recorded per staging call", () => {
    const { root, overlay } = setup();
    const a = join(root, "a.txt");
    overlay.writeBytes(a, enc("1"), {
      origin: { tool: "edit_file", callId: "c1", model: "groq:m", readsBefore: ["a.txt"] },
    });
    overlay.writeBytes(a, enc("2"), {
      origin: { tool: "edit_file", callId: "c2", model: "openrouter:m", readsBefore: ["a.txt", "b.txt"] },
    });
    const [entry] = overlay.list();
    expect(entry!.origins.map((o) => o.callId)).toEqual(["c1", "c2"]);
    expect(entry!.models).toEqual(["groq:m", "openrouter:m"]);
  });

  test("the per-file size cap is enforced with a clear error", () => {
    const root = tempDir();
    const overlay = new Overlay(new DiskFileOps(), 10);
    expect(() => overlay.writeBytes(join(root, "big"), new Uint8Array(11))).toThrow(/over the 10-byte cap/);
  });

  test("a directory cannot be staged as a file", () => {
    const { root, overlay } = setup();
    expect(() => overlay.writeBytes(join(root, "dir"), enc("x"))).toThrow(/directory/);
  });
});
