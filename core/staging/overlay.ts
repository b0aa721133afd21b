import type { ChangeOrigin, DirEntry, FileOps, FileStat, WriteOptions } from "../file-ops.ts";
import { sha256 } from "../hash.ts";
import { sep } from "node:path";
import { OverlayMissError } from "../errors/overlay-miss-error.ts";

/** The disk state a change was built on, taken when the file was first staged. */
export interface BaseState {
  exists: boolean;
  /** SHA-256 of the disk content; null when the file did not exist. */
  hash: string | null;
  size: number;
  /** Permission bits; null when the file did not exist. */
  mode: number | null;
}

/** One staged file: the disk state it was built on and what it becomes (null: deleted). */
export interface StagedEntry {
  real: string;
  base: BaseState;
  after: { bytes: Uint8Array; mode: number } | null;
  origins: ChangeOrigin[];
  models: string[];
  /** When it was last staged (ms since epoch): the mtime the staged view reports. */
  stagedAt: number;
}

/**
 * The staged view of the workspace: reads go deleted → staged → disk, writes and
 * deletes only stage. It implements FileOps, so every tool runs on it unchanged.
 * It keeps only the staged bytes (the base is a hash), so memory stays close to
 * the size of what was staged.
 */
export class Overlay implements FileOps {
  private readonly entries = new Map<string, StagedEntry>();
  /** Paths whose staged state changed since the last `drainChanged()`: what a session saves after a step. */
  private readonly changed = new Set<string>();

  constructor(
    private readonly disk: FileOps,
    private readonly maxFileBytes = Number.POSITIVE_INFINITY,
  ) {}

  stat(real: string): FileStat | null {
    const entry = this.entries.get(real);
    if (entry) {
      if (!entry.after) return null;
      return { kind: "file", size: entry.after.bytes.length, mtimeMs: entry.stagedAt, mode: entry.after.mode };
    }
    const onDisk = this.disk.stat(real);
    if (onDisk) return onDisk;
    return this.hasStagedBelow(real) ? { kind: "dir", size: 0, mtimeMs: 0, mode: 0o755 } : null;
  }

  readBytes(real: string): Uint8Array {
    const entry = this.entries.get(real);
    if (!entry) return this.disk.readBytes(real);
    if (!entry.after) throw new OverlayMissError(`ENOENT: ${real} is staged for deletion`);
    return entry.after.bytes;
  }

  readDir(real: string): DirEntry[] {
    const byName = new Map<string, DirEntry>();
    const onDisk = this.disk.stat(real);
    if (onDisk?.kind === "dir") for (const d of this.disk.readDir(real)) byName.set(d.name, d);
    const prefix = real.endsWith(sep) ? real : real + sep;
    for (const [path, entry] of this.entries) {
      if (!path.startsWith(prefix)) continue;
      const rest = path.slice(prefix.length);
      const cut = rest.indexOf(sep);
      const name = cut === -1 ? rest : rest.slice(0, cut);
      if (cut === -1) {
        if (entry.after) byName.set(name, { name, kind: "file" });
        else byName.delete(name);
      } else if (entry.after) {
        byName.set(name, { name, kind: "dir" });
      }
    }
    // A directory whose every file is staged for deletion still exists on disk; keep it (it may hold other files).
    return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  writeBytes(real: string, bytes: Uint8Array, options: WriteOptions = {}): void {
    if (bytes.length > this.maxFileBytes) {
      throw new Error(`${real} would be ${bytes.length} bytes, over the ${this.maxFileBytes}-byte cap per file.`);
    }
    const known = this.entries.get(real);
    const baseMode = known ? known.base.mode : (this.disk.stat(real)?.mode ?? null);
    const mode = options.mode ?? known?.after?.mode ?? baseMode ?? 0o644;
    const refusal = specialBitsRefusal(baseMode, mode);
    if (refusal) throw new Error(refusal);
    const entry = this.entryFor(real);
    this.changed.add(real);
    entry.after = { bytes, mode };
    this.touch(entry, options);
    if (
      entry.base.exists &&
      entry.base.mode === mode &&
      entry.base.size === bytes.length &&
      entry.base.hash === sha256(bytes)
    ) {
      // Writing back exactly what is on disk is no change at all.
      this.entries.delete(real);
    }
  }

  remove(real: string, options: WriteOptions = {}): void {
    const entry = this.entryFor(real);
    this.changed.add(real);
    if (!entry.base.exists) {
      // Deleting a file this run created drops it: the disk never knew it.
      this.entries.delete(real);
      return;
    }
    entry.after = null;
    this.touch(entry, options);
  }

  /** Paths this overlay changed, with whether they are deleted. */
  *staged(): Iterable<{ real: string; deleted: boolean }> {
    for (const [real, entry] of this.entries) yield { real, deleted: entry.after === null };
  }

  /** True when `real` has a staged change (content or deletion). */
  isStaged(real: string): boolean {
    return this.entries.has(real);
  }

  /** The staged entries, in staging order. */
  list(): StagedEntry[] {
    return [...this.entries.values()];
  }

  /** Puts back a staged entry saved earlier (a changeset reopened after a restart). */
  adopt(entry: StagedEntry): void {
    this.entries.set(entry.real, entry);
    this.changed.add(entry.real);
  }

  /** Drops the staged change of one path (a rejected file), so the view shows the disk again. */
  discard(real: string): void {
    if (this.entries.delete(real)) this.changed.add(real);
  }

  /** The paths whose staged state changed since the previous call (staged, restaged or dropped), then forgets them. */
  drainChanged(): string[] {
    const out = [...this.changed];
    this.changed.clear();
    return out;
  }

  /** The staged entry of one path, if any. */
  entry(real: string): StagedEntry | undefined {
    return this.entries.get(real);
  }

  /** Total staged bytes: what the memory bound is measured against. */
  stagedBytes(): number {
    let n = 0;
    for (const e of this.entries.values()) n += e.after?.bytes.length ?? 0;
    return n;
  }

  private entryFor(real: string): StagedEntry {
    let entry = this.entries.get(real);
    if (!entry) {
      entry = { real, base: this.snapshot(real), after: null, origins: [], models: [], stagedAt: Date.now() };
      this.entries.set(real, entry);
    }
    return entry;
  }

  private snapshot(real: string): BaseState {
    const st = this.disk.stat(real);
    if (!st) return { exists: false, hash: null, size: 0, mode: null };
    if (st.kind !== "file")
      throw new Error(
        `${real} is a ${st.kind === "dir" ? "directory" : "special file"}, not a file: only files can be staged.`,
      );
    return { exists: true, hash: sha256(this.disk.readBytes(real)), size: st.size, mode: st.mode };
  }

  private touch(entry: StagedEntry, options: WriteOptions): void {
    entry.stagedAt = Date.now();
    const origin = options.origin;
    if (!origin) return;
    entry.origins.push(origin);
    if (!entry.models.includes(origin.model)) entry.models.push(origin.model);
  }

  private hasStagedBelow(real: string): boolean {
    const prefix = real.endsWith(sep) ? real : real + sep;
    for (const [path, entry] of this.entries) if (entry.after && path.startsWith(prefix)) return true;
    return false;
  }
}

const SPECIAL_BITS: readonly [number, string][] = [
  [0o4000, "setuid"],
  [0o2000, "setgid"],
  [0o1000, "sticky"],
];

/**
 * Why a mode may not be staged, or null: a setuid, setgid or sticky bit the file
 * does not already have. A setuid or setgid program runs with its owner's or
 * group's rights whoever starts it, so such a bit is never something to approve
 * in passing; bits the file already has on disk are kept as they are.
 */
export function specialBitsRefusal(baseMode: number | null, mode: number): string | null {
  const added = SPECIAL_BITS.filter(([bit]) => (mode & bit) !== 0 && ((baseMode ?? 0) & bit) === 0).map(
    ([, name]) => name,
  );
  if (added.length === 0) return null;
  const plain = (mode & 0o777).toString(8).padStart(3, "0");
  return `its new mode ${(mode & 0o7777).toString(8)} adds the ${added.join(" and ")} bit${added.length > 1 ? "s" : ""}, which Pencil never stages (a setuid or setgid program runs with its owner's rights whoever starts it). Use a plain mode instead, e.g. chmod ${plain}.`;
}
