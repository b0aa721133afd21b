import { dlopen, FFIType, ptr, read } from "bun:ffi";

/**
 * The C library calls the namespace setup makes itself (mount, setrlimit,
 * dup2, execve…): one process doing system calls instead of one mount(8)
 * process per mount, which is what made a sandboxed command cost ~300 ms.
 * Loaded only inside the namespace (core/sandbox/namespace-setup.ts).
 */
const SYMBOLS = {
  mount: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  setrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
  dup2: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  fcntl: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  bind: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  listen: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  ioctl: { args: [FFIType.i32, FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  close: { args: [FFIType.i32], returns: FFIType.i32 },
  open: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  setsid: { args: [], returns: FFIType.i32 },
  signal: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.ptr },
  sigprocmask: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  __errno_location: { args: [], returns: FFIType.ptr },
  strerror: { args: [FFIType.i32], returns: FFIType.cstring },
} as const;

/** glibc's name, the generic one, and musl's loader (which is its libc). */
const CANDIDATES = ["libc.so.6", "libc.so", `/lib/ld-musl-${process.arch === "x64" ? "x86_64" : "aarch64"}.so.1`];

function open() {
  const errors: string[] = [];
  for (const name of CANDIDATES) {
    try {
      return dlopen(name, SYMBOLS).symbols;
    } catch (error) {
      errors.push(`${name}: ${(error as Error).message}`);
    }
  }
  throw new Error(`the C library could not be loaded (${errors.join("; ")})`);
}

const c = open();

/** mount(2) flags (linux/mount.h). */
export const MS = {
  RDONLY: 1,
  NOSUID: 2,
  NODEV: 4,
  NOEXEC: 8,
  REMOUNT: 32,
  NOSYMFOLLOW: 256,
  NOATIME: 1024,
  NODIRATIME: 2048,
  BIND: 4096,
  REC: 16384,
  RELATIME: 1 << 21,
  STRICTATIME: 1 << 24,
} as const;

/** A NUL-terminated copy of `s`, kept alive by the caller for as long as C may read it. */
export function cString(s: string): Buffer {
  return Buffer.from(`${s}\0`, "utf8");
}

/** The calling thread's errno, as its message ("Operation not permitted"). */
export function lastError(): string {
  const code = read.i32(c.__errno_location()!, 0);
  return String(c.strerror(code));
}

/** mount(2); null on success, else why not. */
export function mount(source: string | null, target: string, type: string | null, flags: number, data: string | null) {
  const rc = c.mount(
    source === null ? null : cString(source),
    cString(target),
    type === null ? null : cString(type),
    flags,
    data === null ? null : cString(data),
  );
  return rc === 0 ? null : lastError();
}

/** Sets RLIMIT_FSIZE (soft and hard) to `bytes`. */
export function limitFileSize(bytes: number): string | null {
  const RLIMIT_FSIZE = 1;
  const limits = new BigUint64Array([BigInt(bytes), BigInt(bytes)]);
  return c.setrlimit(RLIMIT_FSIZE, limits) === 0 ? null : lastError();
}

export function dup2(from: number, to: number): string | null {
  return c.dup2(from, to) === to ? null : lastError();
}

/** Marks `fd` close-on-exec (best effort: a descriptor closed meanwhile is simply gone). */
export function closeOnExec(fd: number): void {
  const F_SETFD = 2;
  const FD_CLOEXEC = 1;
  c.fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/** Brings the loopback interface of the current network namespace up (SIOCGIFFLAGS / SIOCSIFFLAGS). */
export function loopbackUp(): string | null {
  const AF_INET = 2;
  const SOCK_DGRAM = 2;
  const SIOCGIFFLAGS = 0x8913;
  const SIOCSIFFLAGS = 0x8914;
  const IFF_UP = 1;
  const fd = c.socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return lastError();
  try {
    // struct ifreq: the name in 16 bytes, then a union whose first member is the short flags.
    const ifreq = Buffer.alloc(40);
    ifreq.write("lo", 0, "utf8");
    if (c.ioctl(fd, SIOCGIFFLAGS, ifreq) !== 0) return lastError();
    ifreq.writeInt16LE(ifreq.readInt16LE(16) | IFF_UP, 16);
    return c.ioctl(fd, SIOCSIFFLAGS, ifreq) === 0 ? null : lastError();
  } finally {
    c.close(fd);
  }
}

/**
 * A TCP socket listening on 127.0.0.1:`port` of the current network namespace: its descriptor, or why not. Made
 * before the command starts, connections to it wait in its backlog until the forwarder given it accepts them.
 */
export function listenOnLoopback(port: number): number | string {
  const AF_INET = 2;
  const SOCK_STREAM = 1;
  const fd = c.socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return lastError();
  // struct sockaddr_in: the family in host order, then the port and 127.0.0.1 in network order, then 8 zero bytes.
  const address = Buffer.alloc(16);
  address.writeUInt16LE(AF_INET, 0);
  address.writeUInt16BE(port, 2);
  address.writeUInt32BE(0x7f000001, 4);
  if (c.bind(fd, address, address.length) !== 0 || c.listen(fd, 512) !== 0) {
    const why = lastError();
    c.close(fd);
    return why;
  }
  return fd;
}

/** setsid(2): a session and process group of this process's own, without a controlling terminal; null on success. */
export function newSession(): string | null {
  return c.setsid() < 0 ? lastError() : null;
}

/**
 * Gives up the controlling terminal, if this process has one (TIOCNOTTY on /dev/tty): a program started from the
 * owner's terminal session (a stdio MCP server) could otherwise open /dev/tty, read the owner's keystrokes and write to
 * the owner's screen. Not being a session leader, only this process (and what it starts) loses it. Null when there is
 * no controlling terminal now, else why it is still there.
 */
export function dropControllingTerminal(): string | null {
  const TIOCNOTTY = 0x5422;
  const O_RDWR = 2;
  const O_NOCTTY = 0x100;
  const path = cString("/dev/tty");
  const fd = c.open(path, O_RDWR | O_NOCTTY);
  if (fd < 0) return null; // ENXIO: none (ENOENT, EACCES: none reachable either)
  const rc = c.ioctl(fd, TIOCNOTTY, null);
  const why = rc === 0 ? null : lastError();
  c.close(fd);
  if (why !== null) return why;
  const again = c.open(path, O_RDWR | O_NOCTTY);
  if (again < 0) return null;
  c.close(again);
  return "the terminal is still reachable after TIOCNOTTY";
}

/**
 * Gives the program about to be executed a clean start: every signal back to
 * its default action (an ignored one would stay ignored across execve, e.g.
 * SIGPIPE, which Bun ignores) and none blocked.
 */
export function resetSignals(): void {
  const SIG_SETMASK = 2;
  for (let sig = 1; sig < 65; sig++) if (sig !== 9 && sig !== 19) c.signal(sig, null);
  c.sigprocmask(SIG_SETMASK, new Uint8Array(128), null);
}

/** execve(2): replaces this process; returns only with the reason it could not. */
export function execve(file: string, argv: readonly string[], env: readonly string[]): string {
  const keep = [cString(file), ...argv.map(cString), ...env.map(cString)];
  const table = (from: number, n: number) => {
    const t = new BigUint64Array(n + 1);
    for (let i = 0; i < n; i++) t[i] = BigInt(ptr(keep[from + i]!));
    return t;
  };
  const rc = c.execve(keep[0]!, table(1, argv.length), table(1 + argv.length, env.length));
  return rc === 0 ? "execve returned" : lastError();
}
