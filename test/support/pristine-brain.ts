import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite/vector";
import { PgliteStore } from "../../brain/pglite-store.ts";

const ROOT = join(import.meta.dir, "..", "..");

/**
 * What decides how a new embedded brain looks on disk: the schema, the code that creates and opens it, and PGlite
 * (with pgvector) itself. A change to any of them makes a new pristine brain instead of reusing an old one.
 */
const MADE_FROM = [
  "brain/schema.sql",
  "brain/migrations.ts",
  "brain/pglite-store.ts",
  "brain/start-pglite.ts",
  "node_modules/@electric-sql/pglite/package.json",
  "node_modules/@electric-sql/pglite/dist/pglite.wasm",
  "node_modules/@electric-sql/pglite/dist/vector.tar.gz",
];

/** The files a pristine folder holds; a new name here makes new folders (the version is hashed with them). */
const LAYOUT = "v2: brain/, image.tar, empty.tar";

let pristine: Promise<string> | null = null;
const images = new Map<string, Promise<Blob>>();

/**
 * The folder holding a brain exactly as `PgliteStore.open` creates it on first use (empty, at the current schema,
 * closed), its `dumpDataDir` image, and the image of a database PGlite just created (no schema at all): made once per machine (as Bun's transpiler cache is kept, in the temporary
 * folder, by user) and reused by every test process after, so a test whose subject is not the creation of a brain
 * does not pay Postgres's initdb (1.5 CPU-s in a warm process, over 4 in a fresh one) for a fresh one.
 */
function pristineFolder(): Promise<string> {
  pristine ??= (async () => {
    const hash = createHash("sha256").update(LAYOUT);
    for (const file of MADE_FROM) hash.update(file).update(readFileSync(join(ROOT, file)));
    const root = join(tmpdir(), `pencil-test-brain-${process.getuid?.() ?? "user"}`);
    const folder = join(root, hash.digest("hex").slice(0, 16));
    if (existsSync(join(folder, "empty.tar"))) return folder;
    mkdirSync(root, { recursive: true, mode: 0o700 });
    // Made aside and renamed into place whole: a process that finds the folder finds all of it.
    const building = mkdtempSync(join(root, "building-"));
    try {
      const store = await PgliteStore.open(join(building, "brain"));
      try {
        const tar = await store.database.dumpDataDir("none");
        writeFileSync(join(building, "image.tar"), new Uint8Array(await tar.arrayBuffer()), { mode: 0o600 });
      } finally {
        await store.close();
      }
      const empty = await PGlite.create({ extensions: { vector } });
      try {
        const tar = await empty.dumpDataDir("none");
        writeFileSync(join(building, "empty.tar"), new Uint8Array(await tar.arrayBuffer()), { mode: 0o600 });
      } finally {
        await empty.close();
      }
      try {
        renameSync(building, folder);
      } catch (error) {
        // Another test process made it meanwhile: theirs is the same brain.
        if (!existsSync(join(folder, "empty.tar"))) throw error;
      }
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
    return folder;
  })();
  pristine.catch(() => {
    pristine = null;
  });
  return pristine;
}

/** Makes `<pencilHome>/brain` a copy of a brain as Pencil creates it on first use: empty, at the current schema. */
export async function givePristineBrain(pencilHome: string): Promise<void> {
  const folder = await pristineFolder();
  mkdirSync(pencilHome, { recursive: true, mode: 0o700 });
  cpSync(join(folder, "brain"), join(pencilHome, "brain"), { recursive: true });
}

/** One of the pristine folder's images, read once per process. */
function imageOf(name: "image.tar" | "empty.tar"): Promise<Blob> {
  let image = images.get(name);
  if (!image) {
    image = pristineFolder().then((folder) => new Blob([readFileSync(join(folder, name))]));
    images.set(name, image);
    image.catch(() => images.delete(name));
  }
  return image;
}

/** A new in-memory store that starts as a brain Pencil just created (loaded from its image: no initdb). */
export async function pristineMemoryStore(): Promise<PgliteStore> {
  return PgliteStore.inMemory(await imageOf("image.tar"));
}

/** A new in-memory PGlite as `PGlite.create` makes one (pgvector loadable, no schema), loaded from an image: no initdb. */
export async function emptyPglite(): Promise<PGlite> {
  return PGlite.create({ loadDataDir: await imageOf("empty.tar"), extensions: { vector } });
}
