import { describe, expect, test } from "bun:test";
import type { ProxyRequest } from "../../net/command-proxy.ts";
import {
  HOST,
  plainRequest,
  proxyFor,
  rawUpstream,
  recordAll,
  throughTunnel,
  tunnel,
  until,
} from "../support/command-proxy-world.ts";

// The command proxy judges a request by the host it reaches and what it asks the server to do, every method
// override spelling included, and records what it refused.

describe("command proxy: a host is judged and recorded by the name it reaches", () => {
  test("a trailing dot or capitals do not make another host of a denied one (tunnel and plain HTTP)", async () => {
    const up = await rawUpstream(true, () => true);
    const plain = await rawUpstream(false, () => true);
    const p = await proxyFor(async (r) => r.host !== HOST, up.ca);
    try {
      await throughTunnel(
        p.socketPath,
        `GIT.pencil.test.:${up.port}`,
        p.proxy.caCertPem,
        "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      );
      await plainRequest(
        p.socketPath,
        `GET http://${HOST}.:${plain.port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      expect(up.received).toEqual([]);
      expect(plain.received).toEqual([]);
      expect(p.proxy.log.map((r) => [r.host, r.url, r.allowed])).toEqual([
        [HOST, `https://${HOST}:${up.port}/`, false],
        [HOST, `http://${HOST}:${plain.port}/`, false],
      ]);
    } finally {
      up.close();
      plain.close();
      await p.close();
    }
  });

  test("an IPv4 address in any spelling (a number, short, hex, inside IPv6) is judged as its dotted form", async () => {
    const up = await rawUpstream(false, () => true);
    const p = await proxyFor(async (r) => r.host !== "127.0.0.1");
    try {
      for (const host of ["2130706433", "127.1", "0x7f.0.0.1", "[::ffff:127.0.0.1]"]) {
        await throughTunnel(
          p.socketPath,
          `${host}:${up.port}`,
          p.proxy.caCertPem,
          "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
          // The run's certificate names the address the proxy judged, whatever the client wrote.
          () => undefined,
        );
        await plainRequest(
          p.socketPath,
          `GET http://${host}:${up.port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
        );
      }
      expect(up.received).toEqual([]);
      expect(new Set(p.proxy.log.map((r) => `${r.host} ${r.allowed}`))).toEqual(new Set(["127.0.0.1 false"]));
      expect(p.proxy.log.length).toBe(8);
    } finally {
      up.close();
      await p.close();
    }
  });

  test("a CONNECT whose authority is not a host and a port is refused unjudged and recorded", async () => {
    const asked: ProxyRequest[] = [];
    const p = await proxyFor(recordAll(asked));
    try {
      const bad = [
        "localhost/x.github.com:443",
        "user@x.github.com:443",
        "x.github.com?:443",
        `${HOST}:0`,
        `${HOST}:65536`,
      ];
      for (const target of bad) await expect(tunnel(p.socketPath, target)).rejects.toThrow("400");
      expect(asked).toEqual([]);
      expect(p.proxy.log.map((r) => [r.method, r.allowed, r.refused?.includes("host")])).toEqual(
        bad.map(() => ["CONNECT", false, true]),
      );
    } finally {
      await p.close();
    }
  });
});

describe("command proxy: a request is judged by what it asks the server to do", () => {
  test("a GET that carries a method override (X-HTTP-Method-Override: DELETE) is judged as the DELETE it asks for", async () => {
    const up = await rawUpstream(true, () => true);
    const asked: ProxyRequest[] = [];
    const p = await proxyFor(async (r) => {
      asked.push(r);
      return r.method === "GET";
    }, up.ca);
    try {
      const target = `${HOST}:${up.port}`;
      for (const header of ["X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"]) {
        const out = await throughTunnel(
          p.socketPath,
          target,
          p.proxy.caCertPem,
          `GET /repo HTTP/1.1\r\nHost: x\r\n${header}: delete\r\nConnection: close\r\n\r\n`,
        );
        expect(out).toContain("403");
      }
      // And never the other way: a POST that says it is a GET is a POST to a server that ignores the header.
      const post = await throughTunnel(
        p.socketPath,
        target,
        p.proxy.caCertPem,
        "POST /repo HTTP/1.1\r\nHost: x\r\nX-HTTP-Method-Override: GET\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx",
      );
      expect(post).toContain("403");
      expect(up.received).toEqual([]);
      expect(asked.map((r) => `${r.method} ${r.url}`)).toEqual([
        ...Array(3).fill(`DELETE https://${target}/repo`),
        `POST https://${target}/repo`,
      ]);
    } finally {
      up.close();
      await p.close();
    }
  });
});

describe("command proxy: every spelling of a method override is judged as the method it names", () => {
  const multipart = (name: string, value: string) =>
    `--b0undary\r\nContent-Disposition: form-data; name="title"\r\n\r\nhello\r\n--b0undary\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n--b0undary--\r\n`;
  const form = (contentType: string, body: string) =>
    `Content-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  const cases: [string, string, string][] = [
    [
      "X-Original-Method",
      "GET /repo HTTP/1.1\r\nHost: x\r\nX-Original-Method: delete\r\nConnection: close\r\n\r\n",
      "DELETE",
    ],
    [
      "X-Forwarded-Method",
      "GET /repo HTTP/1.1\r\nHost: x\r\nX-Forwarded-Method: PUT\r\nConnection: close\r\n\r\n",
      "PUT",
    ],
    ["?_method= in the URL", "GET /repo?_method=DELETE HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "DELETE"],
    [
      "_method in a URL-encoded form body",
      `POST /repo HTTP/1.1\r\nHost: x\r\n${form("application/x-www-form-urlencoded", "title=hi&_method=delete")}`,
      "DELETE",
    ],
    [
      "_method in a multipart form body",
      `POST /repo HTTP/1.1\r\nHost: x\r\n${form("multipart/form-data; boundary=b0undary", multipart("_method", "PATCH"))}`,
      "PATCH",
    ],
    [
      "_method in the form body of a GET",
      `GET /repo HTTP/1.1\r\nHost: x\r\n${form("application/x-www-form-urlencoded", "_method=DELETE")}`,
      "DELETE",
    ],
    [
      "a GET's form body too large to be read before judging (what it names is not known)",
      `GET /repo HTTP/1.1\r\nHost: x\r\n${form("application/x-www-form-urlencoded", `a=${"x".repeat(400_000)}&_method=DELETE`)}`,
      "POST",
    ],
  ];
  test("X-Original-Method, X-Forwarded-Method, ?_method= and a form's _method (URL-encoded, multipart) are judged as the method named", async () => {
    const up = await rawUpstream(true, () => true);
    const asked: ProxyRequest[] = [];
    const p = await proxyFor(async (r) => {
      asked.push(r);
      return r.method === "GET";
    }, up.ca);
    try {
      const target = `${HOST}:${up.port}`;
      for (const [, request] of cases)
        expect(await throughTunnel(p.socketPath, target, p.proxy.caCertPem, request)).toContain("403");
      expect(up.received).toEqual([]);
      expect(asked.map((r) => r.method)).toEqual(cases.map(([, , method]) => method));
    } finally {
      up.close();
      await p.close();
    }
  });

  test("a form read to be judged reaches the server byte for byte once allowed; a POST naming GET stays a POST", async () => {
    const body = multipart("_method", "GET");
    const up = await rawUpstream(true, (bytes) => bytes.endsWith("--b0undary--\r\n"));
    const asked: ProxyRequest[] = [];
    const p = await proxyFor(recordAll(asked), up.ca);
    try {
      const out = await throughTunnel(
        p.socketPath,
        `${HOST}:${up.port}`,
        p.proxy.caCertPem,
        `POST /upload HTTP/1.1\r\nHost: x\r\n${form("multipart/form-data; boundary=b0undary", body)}`,
      );
      expect(out).toContain("200");
      expect(asked.map((r) => r.method)).toEqual(["POST"]);
      expect(up.received.length).toBe(1);
      expect(up.received[0]!.endsWith(`\r\n\r\n${body}`)).toBe(true);
    } finally {
      up.close();
      await p.close();
    }
  });
});

describe("command proxy: what is refused as such is recorded", () => {
  test("a CONNECT inside a tunnel and an upgrade in plain HTTP are refused and recorded, never sent", async () => {
    const up = await rawUpstream(true, () => true);
    const plain = await rawUpstream(false, () => true);
    const asked: ProxyRequest[] = [];
    const p = await proxyFor(recordAll(asked), up.ca);
    try {
      const target = `${HOST}:${up.port}`;
      const nested = await throughTunnel(
        p.socketPath,
        target,
        p.proxy.caCertPem,
        "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n",
      );
      expect(nested).not.toContain("200");
      const upgrade = await plainRequest(
        p.socketPath,
        `GET http://${HOST}:${plain.port}/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`,
      );
      expect(upgrade).not.toContain("101");
      await until(() => p.proxy.log.length >= 2);
      expect(asked).toEqual([]);
      expect(up.received).toEqual([]);
      expect(plain.received).toEqual([]);
      expect(p.proxy.log.map((r) => [r.method, r.allowed, typeof r.refused])).toEqual([
        ["CONNECT", false, "string"],
        ["GET", false, "string"],
      ]);
      expect(p.proxy.log[0]!.refused).toContain("evil.example:443");
      expect(p.proxy.log[1]!.url).toBe(`http://${HOST}:${plain.port}/ws`);
    } finally {
      up.close();
      plain.close();
      await p.close();
    }
  });
});
