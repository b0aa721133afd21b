import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../core/file-ops.ts";

const EXTENSIONS: Record<string, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/webp": "webp",
  "image/gif": "gif",
};

/** The bytes a note was made from (a photo), kept beside the notes so the original is never lost. */
export interface OriginalFile {
  bytes: Uint8Array;
  mediaType: string;
}

/**
 * The originals of notes, one file per note named `<note id>.<ext>` in one directory
 * on this machine (`$PENCIL_HOME/brain/originals`), whichever store holds the notes:
 * the file's name is the record, so the note's schema is unchanged.
 */
export class Originals {
  constructor(readonly dir: string) {}

  /** Writes the original of note `id` atomically, mode 0600; returns its path. */
  keep(id: number, file: OriginalFile): string {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // A stale file under this id (another type) would be found instead of this one.
    this.remove(id);
    const path = join(this.dir, `${id}.${EXTENSIONS[file.mediaType] ?? "bin"}`);
    writeFileAtomic(path, file.bytes, 0o600, true);
    return path;
  }

  /** The path of note `id`'s original, or null when it has none. */
  find(id: number): string | null {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return null;
    }
    const name = names.find((n) => n.startsWith(`${id}.`) && /^\d+\.[a-z]+$/.test(n));
    return name ? join(this.dir, name) : null;
  }

  /** Deletes note `id`'s original, if it has one; returns the path deleted. */
  remove(id: number): string | null {
    const path = this.find(id);
    if (path) rmSync(path, { force: true });
    return path;
  }
}
