// Change notices for directories, from Linux inotify: whether a directory's names may
// have changed since a watch was taken, answered without touching the directory. The
// kernel queues an event before the call that changed the directory returns, so every
// change made before a drain is seen by it. Used by the scan cache to skip the lstat of
// directories nothing happened to. Where notices may have been missed (a queue overflow,
// a mount made or removed) every watch counts as changed and the cache reads again; on a
// file system whose changes may come from elsewhere (network, FUSE, overlay) no watch is
// taken and the cache lstat's.
import { dlopen, FFIType, ptr } from "bun:ffi";
import { readFileSync, readSync, statfsSync } from "node:fs";

/** A watch on one directory: valid while its watch descriptor saw no event and nothing was lost. */
export interface WatchToken {
  readonly wd: number;
  readonly gen: number;
  readonly epoch: number;
}

/** Change notices for directories (see the file's comment). */
export interface DirWatcher {
  /** Pending notices taken in; call once before judging tokens. */
  drain(): void;
  /** Starts watching `dir` (not following a link); null where it cannot be watched or notices cannot be trusted. Take it before reading the directory. */
  watch(dir: string, dev: bigint): WatchToken | null;
  /** True when nothing happened to the directory (its names, itself, its attributes) since `token` was taken. */
  unchanged(token: WatchToken): boolean;
  /** Forgets every notice: every token counts as changed. */
  distrust(): void;
  /** A count that moves with every notice taken in and every distrust: unchanged, nothing happened to any watched directory. */
  changes(): number;
}

const IN_NONBLOCK = 0x800;
const IN_CLOEXEC = 0x80000;
const IN_ATTRIB = 0x4;
const IN_MOVED_FROM = 0x40;
const IN_MOVED_TO = 0x80;
const IN_CREATE = 0x100;
const IN_DELETE = 0x200;
const IN_DELETE_SELF = 0x400;
const IN_MOVE_SELF = 0x800;
const IN_Q_OVERFLOW = 0x4000;
const IN_IGNORED = 0x8000;
const IN_ONLYDIR = 0x01000000;
const IN_DONT_FOLLOW = 0x02000000;
/** One mask for every watch: a second watch on the same directory replaces the first's mask. */
const MASK =
  IN_ATTRIB |
  IN_MOVED_FROM |
  IN_MOVED_TO |
  IN_CREATE |
  IN_DELETE |
  IN_DELETE_SELF |
  IN_MOVE_SELF |
  IN_ONLYDIR |
  IN_DONT_FOLLOW;

/**
 * File systems whose changes all go through this kernel, so inotify sees them: ext2/3/4,
 * xfs, btrfs, tmpfs, f2fs. Not network or FUSE ones (a change made elsewhere raises no
 * event), nor overlayfs (a change to a lower layer neither).
 */
const LOCAL_FS_TYPES: ReadonlySet<number> = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0xf2f52010]);

/**
 * Watches held at most: an eighth of the user's limit (fs.inotify.max_user_watches, shared with
 * every program the user runs: editors watch their projects), so Pencil never starves them;
 * directories beyond it are lstat'ed instead.
 */
function watchBudget(): number {
  try {
    return Math.floor(Number.parseInt(readFileSync("/proc/sys/fs/inotify/max_user_watches", "utf8"), 10) / 8) || 0;
  } catch {
    // No inotify limit to read: no watches, so every scan reads the directories again (slower, never stale).
    return 0;
  }
}

/** How long a refused watch keeps the watcher from asking for more. */
const REFUSED_PAUSE_MS = 1000;

class InotifyWatcher implements DirWatcher {
  private readonly gens = new Map<number, number>();
  /** Watch descriptors alive (not yet IN_IGNORED): what counts against the budget. */
  private readonly live = new Set<number>();
  private readonly localDev = new Map<bigint, boolean>();
  private readonly buf = Buffer.alloc(64 * 1024);
  private epoch = 0;
  private notices = 0;
  /** Until when (performance.now()) no watch is asked for: the kernel refused the last one. */
  private refusedUntil = 0;
  constructor(
    private readonly fd: number,
    private readonly addWatch: (fd: number, path: Buffer, mask: number) => number,
    private readonly budget: number,
    private mounts: string,
  ) {}

  drain(): void {
    // A mount made or removed inside a watched tree changes what its paths show without an event.
    // Unreadable now: nothing says the mounts stayed as they were.
    const mounts = readMounts();
    if (mounts === null || mounts !== this.mounts) {
      if (mounts !== null) this.mounts = mounts;
      this.localDev.clear();
      this.distrust();
    }
    for (;;) {
      let n: number;
      try {
        n = readSync(this.fd, this.buf, 0, this.buf.length, null);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EAGAIN") this.distrust();
        return;
      }
      if (n <= 0) return;
      for (let at = 0; at + 16 <= n; ) {
        const wd = this.buf.readInt32LE(at);
        const mask = this.buf.readUInt32LE(at + 4);
        const len = this.buf.readUInt32LE(at + 12);
        if (mask & IN_Q_OVERFLOW || wd < 0) this.distrust();
        else this.gens.set(wd, (this.gens.get(wd) ?? 0) + 1);
        this.notices++;
        if (mask & IN_IGNORED) this.live.delete(wd);
        at += 16 + len;
      }
    }
  }

  watch(dir: string, dev: bigint): WatchToken | null {
    let local = this.localDev.get(dev);
    if (local === undefined) {
      try {
        local = LOCAL_FS_TYPES.has(Number(statfsSync(dir).type));
      } catch {
        // A file system that cannot be asked is not trusted to report changes: it is read again each time.
        local = false;
      }
      this.localDev.set(dev, local);
    }
    if (!local || this.live.size >= this.budget || performance.now() < this.refusedUntil) return null;
    const wd = this.addWatch(this.fd, Buffer.from(`${dir}\0`), MASK);
    if (wd < 0) {
      // The user's watch limit (every program of the user's shares it), or the directory gone: lstat'ed instead. Asked
      // again only after REFUSED_PAUSE_MS, so a full limit costs one refused call, not one per directory of every search.
      this.refusedUntil = performance.now() + REFUSED_PAUSE_MS;
      return null;
    }
    this.live.add(wd);
    return { wd, gen: this.gens.get(wd) ?? 0, epoch: this.epoch };
  }

  unchanged(token: WatchToken): boolean {
    return token.epoch === this.epoch && (this.gens.get(token.wd) ?? 0) === token.gen;
  }

  distrust(): void {
    this.epoch++;
    this.notices++;
  }

  changes(): number {
    return this.notices;
  }
}

function readMounts(): string | null {
  try {
    return readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    // No mount table: the watch cannot tell remote mounts, so it trusts none (distrust below).
    return null;
  }
}

let shared: DirWatcher | null | undefined;

/** The process's watcher; null where inotify is not available (not Linux, no libc found, no instance left). */
export function dirWatcher(): DirWatcher | null {
  if (shared === undefined) shared = newInotifyWatcher(watchBudget());
  return shared;
}

/** A watcher of its own (one more inotify instance) holding at most `budget` watches; null where inotify is not available. */
export function newInotifyWatcher(budget: number): DirWatcher | null {
  if (process.platform !== "linux") return null;
  const symbols = {
    inotify_init1: { args: [FFIType.i32], returns: FFIType.i32 },
    inotify_add_watch: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  } as const;
  // glibc's name, the generic one, and musl's loader (which is its libc), as in libc.ts.
  for (const name of ["libc.so.6", "libc.so", `/lib/ld-musl-${process.arch === "x64" ? "x86_64" : "aarch64"}.so.1`]) {
    let lib: ReturnType<typeof dlopen<typeof symbols>>;
    try {
      lib = dlopen(name, symbols);
    } catch {
      // Not this libc: the next name is tried.
      continue;
    }
    // Without /proc/self/mountinfo a mount made inside a watched tree would go unseen: no watches then.
    const mounts = readMounts();
    if (mounts === null) return null;
    const fd = lib.symbols.inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return null;
    return new InotifyWatcher(fd, (f, path, mask) => lib.symbols.inotify_add_watch(f, ptr(path), mask), budget, mounts);
  }
  return null; // no C library found: the cache lstat's every directory
}
