import { describe, expect, test } from "bun:test";
import {
  type InterfaceTable,
  isPublicAddress,
  judgeAddress,
  ownMachineReason,
  parseIPv4,
  parseIPv6,
  refusedHostName,
} from "../../net/net-guard.ts";

// --- the address guard, tested directly (no network) -------------------------

const REFUSED = [
  // IPv4
  "127.0.0.1",
  "127.255.255.254",
  "10.0.0.1",
  "10.255.255.255",
  "172.16.0.1",
  "172.31.255.255",
  "192.168.1.1",
  "169.254.169.254",
  "100.64.0.1",
  "100.127.255.255",
  "0.0.0.0",
  "0.1.2.3",
  "224.0.0.1",
  "239.255.255.250",
  "240.0.0.1",
  "255.255.255.255",
  "192.0.0.8",
  "192.0.2.1",
  "198.18.0.1",
  "198.51.100.7",
  "203.0.113.9",
  // IPv4 in other spellings (all 127.0.0.1 or 10.0.0.1)
  "2130706433",
  "0x7f.1",
  "0177.0.0.1",
  "0x7f000001",
  "127.1",
  "0x7f.0.0.1",
  "012.0.0.1",
  "167772161",
  // IPv6
  "::1",
  "::",
  "[::1]",
  "::ffff:127.0.0.1",
  "::ffff:7f00:1",
  "::ffff:10.0.0.1",
  "::ffff:192.168.0.1",
  "::ffff:169.254.169.254",
  "::127.0.0.1",
  "fe80::1",
  "febf:ffff::1",
  "fc00::1",
  "fd12:3456::1",
  "fec0::1",
  "ff02::1",
  "ff05::1:3",
  "2001:db8::1",
  "64:ff9b::7f00:1",
  "64:ff9b::10.1.2.3",
  "64:ff9b:1::1",
  "2002:7f00:1::1",
  "2002:c0a8:101::1",
  "100::1",
  "3fff::1",
  "2001::1",
  "0:0:0:0:0:0:0:1",
  "0000:0000:0000:0000:0000:ffff:7f00:0001",
];

const PUBLIC = [
  "1.1.1.1",
  "8.8.8.8",
  "93.184.216.34",
  "172.15.255.255",
  "172.32.0.1",
  "100.63.255.255",
  "100.128.0.1",
  "192.169.0.1",
  "11.0.0.1",
  "223.255.255.254",
  "198.20.0.1",
  "2606:4700:4700::1111",
  "2001:4860:4860::8888",
  "2a00:1450:4001:81c::200e",
  "::ffff:8.8.8.8",
  "64:ff9b::8.8.8.8",
  "2002:808:808::1",
];

describe("address guard", () => {
  test.each(REFUSED)("refuses %s", (ip) => {
    const verdict = judgeAddress(ip);
    expect(verdict.public).toBe(false);
    expect(verdict.reason.length).toBeGreaterThan(0);
  });

  test.each(PUBLIC)("accepts %s", (ip) => {
    expect(judgeAddress(ip)).toEqual({ public: true, reason: "" });
  });

  test("the refused table covers both families and at least 20 addresses", () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(20);
    expect(REFUSED.filter((ip) => ip.includes(":")).length).toBeGreaterThanOrEqual(10);
  });

  test("reasons name the kind of address", () => {
    expect(judgeAddress("127.0.0.1").reason).toContain("loopback");
    expect(judgeAddress("0x7f.1").reason).toContain("loopback");
    expect(judgeAddress("10.1.2.3").reason).toContain("private");
    expect(judgeAddress("100.64.1.1").reason).toContain("carrier-grade NAT");
    expect(judgeAddress("169.254.169.254").reason).toContain("link-local");
    expect(judgeAddress("::ffff:127.0.0.1").reason).toContain("loopback");
    expect(judgeAddress("fd00::1").reason).toContain("unique-local");
    expect(judgeAddress("ff02::1").reason).toContain("multicast");
  });

  test("parses every IPv4 spelling inet_aton accepts, and nothing else", () => {
    const loopback = 0x7f000001;
    for (const s of [
      "127.0.0.1",
      "2130706433",
      "0x7f.1",
      "0177.0.0.1",
      "0x7f000001",
      "127.1",
      "127.0.1",
      "0x7F.0x0.0x0.0x1",
      "127.0.0.1.",
    ]) {
      expect(parseIPv4(s)).toBe(loopback);
    }
    for (const s of [
      "256.0.0.1",
      "1.2.3.4.5",
      "1..2.3",
      "",
      "example.com",
      "08.0.0.1",
      "127.0.0.1.1",
      "1.2.3.256",
      "4294967296",
    ]) {
      expect(parseIPv4(s)).toBeNull();
    }
  });

  test("parses IPv6 forms and rejects malformed ones and zone ids", () => {
    expect(Array.from(parseIPv6("::ffff:127.0.0.1")!)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 127, 0, 0, 1]);
    expect(parseIPv6("[2001:db8::1]")).not.toBeNull();
    for (const s of ["1:2:3:4:5:6:7:8:9", "1::2::3", ":1", "fe80::1%eth0", "12345::1", "::ffff:256.0.0.1", "1.2.3.4"]) {
      expect(parseIPv6(s)).toBeNull();
    }
    expect(isPublicAddress("fe80::1%eth0")).toBe(false);
    expect(isPublicAddress("not-an-ip")).toBe(false);
  });

  test("localhost names are refused before any lookup", () => {
    for (const name of ["localhost", "LOCALHOST", "localhost.", "app.localhost", "a.b.localhost"])
      expect(refusedHostName(name)).not.toBeNull();
    for (const name of ["localhost.example.com", "mylocalhost.com", "example.com"])
      expect(refusedHostName(name)).toBeNull();
  });
});

describe("net guard: this machine's own addresses, in every spelling", () => {
  const interfaces: InterfaceTable = {
    lo: [
      { address: "127.0.0.1", netmask: "255.0.0.0", family: "IPv4" },
      { address: "::1", netmask: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", family: "IPv6" },
    ],
    eth0: [
      { address: "192.168.1.20", netmask: "255.255.255.0", family: "IPv4" },
      { address: "2a01:4f8:1:2::20", netmask: "ffff:ffff:ffff:ffff::", family: "IPv6" },
      { address: "fe80::a00:27ff:fe4e:66a1", netmask: "ffff:ffff:ffff:ffff::", family: "IPv6" },
    ],
    docker0: [{ address: "172.17.0.1", netmask: "255.255.0.0", family: "IPv4" }],
    wg0: [{ address: "203.0.114.7", netmask: "255.255.255.255", family: 4 }],
  };
  const own: [string, RegExp][] = [
    ["127.0.0.1", /loopback/],
    ["127.9.9.9", /loopback/],
    ["2130706433", /loopback/],
    ["0x7f.1", /loopback/],
    ["::1", /loopback/],
    ["[::1]", /loopback/],
    ["::127.0.0.1", /127\.0\.0\.1: loopback/],
    ["[::127.0.0.1]", /127\.0\.0\.1: loopback/],
    ["::ffff:127.0.0.1", /loopback/],
    ["[::ffff:7f00:1]", /loopback/],
    ["64:ff9b::7f00:1", /loopback/],
    ["2002:7f00:1::", /loopback/],
    ["0.0.0.0", /unspecified/],
    ["0", /unspecified/],
    ["::", /unspecified/],
    ["169.254.169.254", /link-local/],
    ["fe80::1", /link-local/],
    ["255.255.255.255", /limited broadcast/],
    ["192.168.1.20", /interface eth0/],
    ["0xc0a80114", /interface eth0/],
    ["::ffff:192.168.1.20", /interface eth0/],
    ["::ffff:c0a8:114", /interface eth0/],
    ["192.168.1.255", /broadcast address of this machine's interface eth0/],
    ["2a01:4f8:1:2::20", /interface eth0/],
    ["2a01:04f8:0001:0002:0000:0000:0000:0020", /interface eth0/],
    ["fe80::a00:27ff:fe4e:66a1%eth0", /link-local/],
    ["172.17.0.1", /interface docker0/],
    ["203.0.114.7", /interface wg0/],
    ["::ffff:203.0.114.7", /interface wg0/],
    ["::10.1.2.3", /IPv4-compatible/],
    ["not-an-ip", /not an IP address/],
  ];
  for (const [ip, reason] of own)
    test(`${ip} is this machine's`, () => {
      expect(ownMachineReason(ip, interfaces) ?? "(none)").toMatch(reason);
    });
  // Other private networks stay for the rules to judge; public addresses are nobody's here.
  for (const ip of [
    "192.168.1.21",
    "172.17.0.2",
    "10.0.0.5",
    "fd00::5",
    "93.184.215.14",
    "2606:4700::1111",
    "203.0.114.8",
  ])
    test(`${ip} is not this machine's`, () => {
      expect(ownMachineReason(ip, interfaces)).toBeNull();
    });
  test("an address is this machine's only while an interface has it: the table is read at each decision", () => {
    expect(ownMachineReason("10.98.0.1", interfaces)).toBeNull();
    expect(
      ownMachineReason("10.98.0.1", {
        ...interfaces,
        tun0: [{ address: "10.98.0.1", netmask: "255.255.255.255", family: "IPv4" }],
      }),
    ).toMatch(/interface tun0/);
  });
});
