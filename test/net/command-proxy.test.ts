import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { ProxyRequest } from "../../net/command-proxy.ts";
import { createRunCa } from "../../net/run-ca.ts";
import {
  HOST,
  curl,
  ended,
  exchange,
  hasCurl,
  plainRequest,
  proxyFor,
  rawUpstream,
  recordAll,
  requestsIn,
  throughTunnel,
  tunnel,
  until,
  upstreamServer,
} from "../support/command-proxy-world.ts";

// The command proxy: HTTPS tunnels opened and every request inside judged; the upstream reads exactly what was judged.

describe("command proxy: HTTPS tunnels are opened and every request inside is judged", () => {
  let up: Awaited<ReturnType<typeof upstreamServer>>;
  beforeAll(async () => {
    up = await upstreamServer();
  });
  afterAll(() => up.server.stop(true));

  test.skipIf(!hasCurl)(
    "a GET inside the tunnel is judged by method and full https URL and goes through; a POST refused is never sent",
    async () => {
      const asked: ProxyRequest[] = [];
      const p = await proxyFor(async (r) => {
        asked.push(r);
        return r.method === "GET";
      }, up.ca);
      try {
        const base = `https://${HOST}:${up.server.port}`;
        const common = ["--proxy", `http://127.0.0.1:${p.port}`, "--cacert", p.caFile];
        const get = await curl([...common, `${base}/repo.git/info/refs?service=git-receive-pack`, `${base}/again`]);
        expect(get.status).toBe(0);
        expect(get.out).toBe(`hello from ${HOST}\nhello from ${HOST}\n`);
        const post = await curl([
          ...common,
          "-X",
          "POST",
          "--data",
          "secret-upload",
          "-w",
          "%{http_code}",
          `${base}/upload`,
        ]);
        expect(post.out).toContain("the owner did not allow POST");
        expect(post.out).toEndWith("403");
        expect(asked.map((r) => `${r.method} ${r.url}`)).toEqual([
          `GET ${base}/repo.git/info/refs?service=git-receive-pack`,
          `GET ${base}/again`,
          `POST ${base}/upload`,
        ]);
        expect(up.seen.filter((x) => x.startsWith("POST"))).toEqual([]);
        expect(up.seen).toContain(`GET /again host=${HOST}:${up.server.port} body=0`);
        expect(p.proxy.log.map((r) => [r.method, r.allowed])).toEqual([
          ["GET", true],
          ["GET", true],
          ["POST", false],
        ]);
      } finally {
        await p.close();
      }
    },
    30_000,
  );

  test.skipIf(!hasCurl)(
    "a client that does not trust the run's CA fails closed: nothing is asked or sent",
    async () => {
      const asked: ProxyRequest[] = [];
      const p = await proxyFor(recordAll(asked), up.ca);
      const before = up.seen.length;
      try {
        const out = await curl(["--proxy", `http://127.0.0.1:${p.port}`, `https://${HOST}:${up.server.port}/`]);
        expect(out.status).toBe(60); // curl: the peer's certificate could not be verified
        await until(() => p.proxy.log.length > 0);
        expect(asked).toEqual([]);
        expect(up.seen.length).toBe(before);
        expect(p.proxy.log).toEqual([
          expect.objectContaining({
            method: "CONNECT",
            host: HOST,
            allowed: false,
            refused: expect.stringContaining("TLS handshake failed"),
          }),
        ]);
      } finally {
        await p.close();
      }
    },
  );

  test("a stream that is not TLS in a tunnel (SSH over 443) is refused and recorded, never passed through", async () => {
    const raw = createServer((s) => s.end("SSH-2.0-upstream\r\n"));
    await new Promise<void>((r) => raw.listen(0, "127.0.0.1", r));
    let reached = 0;
    raw.on("connection", () => reached++);
    const rawPort = (raw.address() as { port: number }).port;
    const p = await proxyFor(async () => true);
    try {
      const s = await tunnel(p.socketPath, `${HOST}:${rawPort}`);
      s.write("SSH-2.0-OpenSSH_9.2\r\n");
      await new Promise((r) => s.on("close", r));
      // And a client that waits for the server to speak first: silence is refused too.
      const quiet = await tunnel(p.socketPath, `${HOST}:${rawPort}`);
      await new Promise((r) => quiet.on("close", r));
      expect(reached).toBe(0);
      expect(p.proxy.log.map((r) => [r.method, `${r.host}:${r.port}`, r.allowed, r.refused?.split(" ")[0]])).toEqual([
        ["CONNECT", `${HOST}:${rawPort}`, false, "not"],
        ["CONNECT", `${HOST}:${rawPort}`, false, "the"],
      ]);
    } finally {
      raw.close();
      await p.close();
    }
  });

  test("a TLS handshake begun and never finished is given up, recorded, and reaches nothing", async () => {
    const p = await proxyFor(async () => true, up.ca);
    const before = up.seen.length;
    try {
      const s = await tunnel(p.socketPath, `${HOST}:${up.server.port}`);
      // The start of a ClientHello record (handshake, TLS 1.0 record version, a length), then nothing more.
      s.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00]));
      await new Promise((r) => s.on("close", r));
      expect(p.proxy.log.map((r) => [r.method, r.allowed, r.refused])).toEqual([
        ["CONNECT", false, "the TLS handshake did not finish in time"],
      ]);
      expect(up.seen.length).toBe(before);
    } finally {
      await p.close();
    }
  });

  test("TLS without HTTP/1.1 inside (HTTP/2 only, or another protocol) is refused and recorded", async () => {
    const p = await proxyFor(async () => true, up.ca);
    const before = up.seen.length;
    try {
      const target = `${HOST}:${up.server.port}`;
      // An HTTP/2-only client: the proxy offers http/1.1 alone, so the handshake fails.
      const h2 = tlsConnect({
        socket: await tunnel(p.socketPath, target),
        servername: HOST,
        ca: p.proxy.caCertPem,
        ALPNProtocols: ["h2"],
      });
      await ended(h2);
      // TLS that carries something else than HTTP.
      const other = tlsConnect({ socket: await tunnel(p.socketPath, target), servername: HOST, ca: p.proxy.caCertPem });
      await new Promise((r) => other.on("secureConnect", r));
      other.write("\x00\x01binary protocol\r\n\r\n");
      await ended(other);
      await until(() => p.proxy.log.length >= 2);
      expect(p.proxy.log.map((r) => [r.method, r.allowed])).toEqual([
        ["CONNECT", false],
        ["CONNECT", false],
      ]);
      expect(p.proxy.log[0]!.refused).toContain("TLS handshake failed");
      expect(p.proxy.log[1]!.refused).toContain("not valid HTTP/1.1");
      expect(up.seen.length).toBe(before);
    } finally {
      await p.close();
    }
  });

  test("the request inside goes to the host the tunnel named: an absolute URL for another host is refused, a foreign Host header replaced", async () => {
    const asked: ProxyRequest[] = [];
    const p = await proxyFor(recordAll(asked), up.ca);
    try {
      const target = `${HOST}:${up.server.port}`;
      const ask = (request: string) => exchange(p, target, request);
      const fronted = await ask("GET /x HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n");
      expect(fronted).toContain(`hello from ${HOST}`);
      expect(up.seen).toContain(`GET /x host=${target} body=0`);
      const absolute = await ask(
        "GET https://evil.example/ HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
      );
      expect(absolute).toStartWith("HTTP/1.1 400");
      expect(asked.map((r) => r.url)).toEqual([`https://${target}/x`]);
    } finally {
      await p.close();
    }
  });

  test("a body is framed anew on the way up; a request with two framings is refused unjudged", async () => {
    const asked: ProxyRequest[] = [];
    const p = await proxyFor(recordAll(asked), up.ca);
    try {
      const target = `${HOST}:${up.server.port}`;
      const send = (request: string) => exchange(p, target, request);
      const chunked = await send(
        "POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
      );
      expect(chunked).toStartWith("HTTP/1.1 200");
      expect(up.seen).toContain(`POST /chunked host=${target} body=11`);
      const hidden = "GET /hidden HTTP/1.1\r\nHost: x\r\n\r\n";
      const both = await send(
        `POST /both HTTP/1.1\r\nHost: x\r\nContent-Length: ${5 + hidden.length}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n${hidden}`,
      );
      expect(both).not.toContain(" 200 ");
      expect(asked.map((r) => r.url)).toEqual([`https://${target}/chunked`]);
      expect(up.seen.some((x) => x.includes("/both") || x.includes("/hidden"))).toBe(false);
    } finally {
      await p.close();
    }
  });

  test("a protocol upgrade (WebSocket) inside the tunnel is refused and recorded, never sent", async () => {
    const asked: ProxyRequest[] = [];
    const p = await proxyFor(recordAll(asked), up.ca);
    const before = up.seen.length;
    try {
      const target = `${HOST}:${up.server.port}`;
      const s = tlsConnect({ socket: await tunnel(p.socketPath, target), servername: HOST, ca: p.proxy.caCertPem });
      let out = "";
      s.on("data", (d) => {
        out += d;
      });
      s.on("secureConnect", () =>
        s.write(
          "GET /socket HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        ),
      );
      await ended(s);
      expect(out).not.toContain("101");
      expect(up.seen.length).toBe(before);
      expect(p.proxy.log).toEqual([
        expect.objectContaining({
          method: "GET",
          url: `https://${target}/socket`,
          allowed: false,
          refused: expect.stringContaining("upgrade"),
        }),
      ]);
    } finally {
      await p.close();
    }
  });

  test("a client that hangs up in the middle of an upload leaves the proxy serving", async () => {
    const p = await proxyFor(async () => true, up.ca);
    try {
      const target = `${HOST}:${up.server.port}`;
      const s = tlsConnect({ socket: await tunnel(p.socketPath, target), servername: HOST, ca: p.proxy.caCertPem });
      await new Promise((r) => s.on("secureConnect", r));
      s.write(`POST /cut HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n${"x".repeat(1000)}`);
      await until(() => p.proxy.log.length > 0);
      s.destroy();
      const again = tlsConnect({ socket: await tunnel(p.socketPath, target), servername: HOST, ca: p.proxy.caCertPem });
      let out = "";
      again.on("data", (d) => {
        out += d;
      });
      again.on("secureConnect", () => again.write("GET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
      await ended(again);
      expect(out).toStartWith("HTTP/1.1 200");
      expect(up.seen.some((x) => x.startsWith("POST /cut") && !x.endsWith("body=1000000"))).toBe(false);
    } finally {
      await p.close();
    }
  });

  test.skipIf(!hasCurl)("an upstream whose certificate the proxy does not trust is not reached: 502", async () => {
    // No upstreamCa: the system's trust store, which does not know the test's upstream CA.
    const p = await proxyFor(async () => true);
    const before = up.seen.length;
    try {
      const out = await curl([
        "--proxy",
        `http://127.0.0.1:${p.port}`,
        "--cacert",
        p.caFile,
        "-w",
        "%{http_code}",
        "-X",
        "POST",
        "--data",
        "x",
        `https://${HOST}:${up.server.port}/`,
      ]);
      expect(out.out).toEndWith("502");
      expect(up.seen.length).toBe(before);
    } finally {
      await p.close();
    }
  });

  test.skipIf(!hasCurl)("an upstream whose certificate names another host is not reached: 502", async () => {
    const other = await createRunCa("test upstream CA 2");
    const { cert, key } = await other.leafFor("other.pencil.test");
    let reached = 0;
    const wrong = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert, key },
      fetch: () => {
        reached++;
        return new Response("x");
      },
    });
    const p = await proxyFor(async () => true, other.certPem);
    try {
      const common = ["--proxy", `http://127.0.0.1:${p.port}`, "--cacert", p.caFile, "-w", "%{http_code}"];
      expect((await curl([...common, `https://${HOST}:${wrong.port}/`])).out).toEndWith("502");
      expect(reached).toBe(0);
    } finally {
      wrong.stop(true);
      await p.close();
    }
  });

  test("each proxy has its own CA; its bundle is the system's certificates and then the CA", async () => {
    const a = await proxyFor(async () => false);
    const b = await proxyFor(async () => false);
    try {
      expect(a.proxy.caCertPem).not.toBe(b.proxy.caCertPem);
      expect(a.proxy.caCertPem).toStartWith("-----BEGIN CERTIFICATE-----");
      expect(a.proxy.trustBundlePem.trim()).toEndWith(a.proxy.caCertPem.trim());
      expect(a.proxy.trustBundlePem.split("BEGIN CERTIFICATE").length).toBeGreaterThan(2);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("command proxy: the upstream server reads exactly the requests that were judged", () => {
  // A body the proxy read as chunked must reach the server framed: sent bare after the head of a GET (which
  // normally has no body), the server would read it as a second request that nobody judged.
  const smuggled = "POST /smuggled HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
  const chunkedBody = `${smuggled.length.toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`;

  for (const method of ["GET", "HEAD", "OPTIONS"])
    test(`a ${method} with a chunked body inside a tunnel: the body reaches the server framed, never as a request`, async () => {
      const up = await rawUpstream(true, (b) => b.includes("hello"));
      const p = await proxyFor(async (r) => r.method === method, up.ca);
      try {
        const target = `${HOST}:${up.port}`;
        const out = await throughTunnel(
          p.socketPath,
          target,
          p.proxy.caCertPem,
          `${method} /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunkedBody}`,
        );
        expect(out).toStartWith("HTTP/1.1 200");
        expect(up.received.map(requestsIn)).toEqual([[`${method} /a HTTP/1.1`]]);
        expect(p.proxy.log.map((r) => `${r.method} ${r.url}`)).toEqual([`${method} https://${target}/a`]);
      } finally {
        up.close();
        await p.close();
      }
    });

  test("a plain-HTTP GET with a chunked body: the body reaches the server framed, never as a request", async () => {
    const up = await rawUpstream(false, (b) => b.includes("hello"));
    const p = await proxyFor(async (r) => r.method === "GET");
    try {
      const out = await plainRequest(
        p.socketPath,
        `GET http://${HOST}:${up.port}/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunkedBody}`,
      );
      expect(out).toStartWith("HTTP/1.1 200");
      expect(up.received.map(requestsIn)).toEqual([["GET /a HTTP/1.1"]]);
    } finally {
      up.close();
      await p.close();
    }
  });
});
