/**
 * Which network addresses a model-driven fetch may reach: only public unicast
 * ones. Everything private, local, reserved or special-purpose is refused, for
 * IPv4 and IPv6 alike, so a URL cannot be used to probe the owner's machine,
 * LAN or cloud metadata service. When in doubt, no.
 */

/** The guard's answer for one address: public or not, and why not in words. */
export interface AddressVerdict {
  public: boolean;
  /** Why the address is refused (e.g. "loopback (127.0.0.0/8)"); empty when public. */
  reason: string;
}

type Range = readonly [base: string, bits: number, reason: string];

// IANA IPv4 special-purpose registry, plus multicast and the reserved class E.
const V4_REFUSED: Range[] = [
  ["0.0.0.0", 8, '"this network" / unspecified'],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT (shared address space)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (includes cloud metadata services)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation (TEST-NET-1)"],
  ["192.31.196.0", 24, "AS112 service"],
  ["192.52.193.0", 24, "AMT"],
  ["192.88.99.0", 24, "6to4 relay anycast"],
  ["192.168.0.0", 16, "private"],
  ["192.175.48.0", 24, "AS112 service"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation (TEST-NET-2)"],
  ["203.0.113.0", 24, "documentation (TEST-NET-3)"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved (includes broadcast)"],
];

// Checked after the IPv4-embedding forms below; whatever is not global unicast (2000::/3) is refused too.
const V6_REFUSED: Range[] = [
  ["64:ff9b:1::", 48, "local-use NAT64"],
  ["100::", 64, "discard-only"],
  ["2001::", 23, "IETF protocol assignments (Teredo, ORCHID, ...)"],
  ["2001:db8::", 32, "documentation"],
  ["3fff::", 20, "documentation"],
  ["5f00::", 16, "segment routing"],
  ["fc00::", 7, "unique-local"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local"],
  ["ff00::", 8, "multicast"],
];

const v4Table = V4_REFUSED.map(([base, bits, reason]) => ({
  net: parseIPv4(base)!,
  bits,
  reason: `${reason} (${base}/${bits})`,
}));
const v6Table = V6_REFUSED.map(([base, bits, reason]) => ({
  net: parseIPv6(base)!,
  bits,
  reason: `${reason} (${base}/${bits})`,
}));

/**
 * Parses IPv4 in every spelling `inet_aton` accepts: dotted with 1–4 parts,
 * each decimal, octal (leading 0) or hex (0x) — so `2130706433`, `0x7f.1` and
 * `0177.0.0.1` are all 127.0.0.1. Returns the 32-bit value, or null.
 */
export function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop(); // a trailing dot is allowed
  if (parts.length < 1 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const part of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(part)) n = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) n = parseInt(part, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) n = Number(part);
    else return null;
    if (!Number.isSafeInteger(n)) return null;
    nums.push(n);
  }
  const last = nums.pop()!;
  if (nums.some((n) => n > 255) || last >= 2 ** (8 * (4 - nums.length))) return null;
  let value = 0;
  nums.forEach((n, i) => (value += n * 2 ** (8 * (3 - i))));
  return value + last;
}

/** Parses an IPv6 address (brackets allowed, zone id refused) into 16 bytes, or null. */
export function parseIPv6(text: string): Uint8Array | null {
  let s = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (s.includes("%") || !s.includes(":")) return null;
  s = s.toLowerCase();
  // A dotted IPv4 tail (::ffff:127.0.0.1) becomes two hex groups.
  const tail = /(^|:)(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const dotted = tail[2]!;
    if (!/^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(dotted)) return null;
    const v4 = parseIPv4(dotted)!;
    s = s.slice(0, s.length - dotted.length) + `${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groupsOf = (part: string): string[] => (part === "" ? [] : part.split(":"));
  const head = groupsOf(halves[0]!);
  const rest = halves.length === 2 ? groupsOf(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const g = groups[i]!;
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
    const n = parseInt(g, 16);
    bytes[i * 2] = n >> 8;
    bytes[i * 2 + 1] = n & 0xff;
  }
  return bytes;
}

/** Judges one IP address (v4 in any spelling, or v6): public unicast or refused, with the reason. Anything unparsable is refused. */
export function judgeAddress(ip: string): AddressVerdict {
  const v4 = parseIPv4(ip);
  if (v4 !== null) return judgeV4(v4);
  const v6 = parseIPv6(ip);
  if (v6) return judgeV6(v6);
  return { public: false, reason: `"${ip}" is not an IP address` };
}

/** True when `ip` is a public unicast address a fetch may connect to. */
export function isPublicAddress(ip: string): boolean {
  return judgeAddress(ip).public;
}

/** Refuses host names that always mean this machine (`localhost`, `*.localhost`); null when the name may be resolved. */
export function refusedHostName(hostname: string): string | null {
  const name = hostname.toLowerCase().replace(/\.+$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return `${hostname} is this machine (loopback)`;
  return null;
}

/** The address as a URL host: IPv6 in brackets, IPv4 as is. */
export function hostForUrl(ip: string): string {
  return ip.includes(":") ? `[${ip}]` : ip;
}

function judgeV4(value: number): AddressVerdict {
  for (const { net, bits, reason } of v4Table) {
    if (sameV4Prefix(value, net, bits)) return { public: false, reason };
  }
  return { public: true, reason: "" };
}

function judgeV6(bytes: Uint8Array): AddressVerdict {
  const embedded = (from: number) =>
    ((bytes[from]! << 24) | (bytes[from + 1]! << 16) | (bytes[from + 2]! << 8) | bytes[from + 3]!) >>> 0;
  const embeddedVerdict = (label: string, from: number): AddressVerdict => {
    const inner = judgeV4(embedded(from));
    return inner.public ? inner : { public: false, reason: `${label} of a non-public IPv4 address: ${inner.reason}` };
  };
  const zero = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  if (zero(0, 16)) return { public: false, reason: "unspecified (::/128)" };
  if (zero(0, 15) && bytes[15] === 1) return { public: false, reason: "loopback (::1/128)" };
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff)
    return embeddedVerdict("IPv4-mapped IPv6 (::ffff:0:0/96)", 12);
  if (zero(0, 12)) return { public: false, reason: "IPv4-compatible IPv6, deprecated (::/96)" };
  if (sameV6Prefix(bytes, parseIPv6("64:ff9b::")!, 96)) return embeddedVerdict("NAT64 (64:ff9b::/96)", 12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return embeddedVerdict("6to4 (2002::/16)", 2);
  for (const { net, bits, reason } of v6Table) {
    if (sameV6Prefix(bytes, net, bits)) return { public: false, reason };
  }
  if ((bytes[0]! & 0xe0) !== 0x20) return { public: false, reason: "not global unicast (outside 2000::/3)" };
  return { public: true, reason: "" };
}

function sameV4Prefix(a: number, b: number, bits: number): boolean {
  if (bits === 0) return true;
  const shift = 32 - bits;
  return a >>> shift === b >>> shift;
}

function sameV6Prefix(a: Uint8Array, b: Uint8Array, bits: number): boolean {
  for (let i = 0; i < 16 && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((a[i]! & mask) !== (b[i]! & mask)) return false;
  }
  return true;
}

/** One address of a local interface, as `os.networkInterfaces()` lists it. */
interface InterfaceAddress {
  address: string;
  /** The netmask in dotted (IPv4) or colon (IPv6) form; used for IPv4's directed broadcast. */
  netmask?: string;
  family: string | number;
}

/** The interfaces' addresses by name, as `os.networkInterfaces()` gives them. */
export type InterfaceTable = Record<string, readonly InterfaceAddress[] | undefined>;

/**
 * The IPv4 address an IPv6 one carries and would reach on a stack that maps it (IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002:AABB:CCDD::`), as a 32-bit value; null otherwise.
 */
function embeddedV4(bytes: Uint8Array): number | null {
  const at = (from: number) =>
    ((bytes[from]! << 24) | (bytes[from + 1]! << 16) | (bytes[from + 2]! << 8) | bytes[from + 3]!) >>> 0;
  const zero = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return at(12);
  // ::/96 minus :: and ::1, which are IPv6's own.
  if (zero(0, 12) && !(zero(12, 15) && (bytes[15] === 0 || bytes[15] === 1))) return at(12);
  if (sameV6Prefix(bytes, parseIPv6("64:ff9b::")!, 96)) return at(12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return at(2);
  return null;
}

/** An address as one comparable key: IPv4 (also when carried inside IPv6) as `4:<value>`, IPv6 as `6:<hex>`; null when not an address. */
function addressKeys(ip: string): string[] | null {
  const bare = ip.replace(/%.*$/, "");
  const v4 = parseIPv4(bare);
  if (v4 !== null) return [`4:${v4}`];
  const v6 = parseIPv6(bare);
  if (!v6) return null;
  const keys = [`6:${Buffer.from(v6).toString("hex")}`];
  const inner = embeddedV4(v6);
  if (inner !== null) keys.push(`4:${inner}`);
  return keys;
}

/**
 * Why `ip` (any spelling: a number, `0x7f.1`, `[::127.0.0.1]`, `::ffff:7f00:1`, an interface's IPv6 address with
 * or without its zone) is this machine or its link: loopback, unspecified (`0.0.0.0`, `::`), link-local (the cloud
 * metadata service), broadcast, or an address of any local interface in `interfaces` (the LAN address, a Docker
 * bridge's 172.17.0.1, a VPN's), or the directed broadcast of one; null when it is none of these. Pass the table
 * read at the moment of the decision (`os.networkInterfaces()`), so an interface that came up since counts too.
 * Text that is not an address is this machine's for all it is known (refused).
 */
export function ownMachineReason(ip: string, interfaces: InterfaceTable): string | null {
  const keys = addressKeys(ip);
  if (keys === null) return `"${ip}" is not an IP address`;
  for (const key of keys) {
    const value = key.startsWith("4:") ? Number(key.slice(2)) : null;
    const verdict = value !== null ? judgeV4(value) : judgeV6(Uint8Array.from(Buffer.from(key.slice(2), "hex")));
    const why =
      value === 0xffffffff
        ? "the limited broadcast address (255.255.255.255)"
        : !verdict.public && /loopback|unspecified|this network|link-local/.test(verdict.reason)
          ? verdict.reason
          : null;
    if (why) return keys.length > 1 && value !== null ? `it carries the IPv4 address ${v4Text(value)}: ${why}` : why;
  }
  const v6 = keys.length > 1 ? parseIPv6(ip.replace(/%.*$/, "")) : null;
  // Deprecated, and delivered to the IPv4 address they carry by some systems: never a way to a host of the internet.
  if (v6?.subarray(0, 12).every((b) => b === 0))
    return "IPv4-compatible IPv6 (::/96), which some systems deliver to the IPv4 address it carries";
  const wanted = new Set(keys);
  for (const [name, addresses] of Object.entries(interfaces)) {
    for (const a of addresses ?? []) {
      const own = addressKeys(a.address);
      if (own?.some((k) => wanted.has(k))) return `an address of this machine's interface ${name} (${a.address})`;
      const v4 = parseIPv4(a.address);
      const mask = a.netmask ? parseIPv4(a.netmask) : null;
      if (v4 !== null && mask !== null && mask !== 0xffffffff && wanted.has(`4:${(v4 | ~mask) >>> 0}`))
        return `the broadcast address of this machine's interface ${name} (${a.address}/${a.netmask})`;
    }
  }
  return null;
}

function v4Text(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join(".");
}
