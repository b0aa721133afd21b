import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { createServer as createTlsServer, connect as tlsConnect } from "node:tls";
import { type ProxyRequest, startCommandProxy } from "../../net/command-proxy.ts";
import { createRunCa } from "../../net/run-ca.ts";
import { tempDir } from "./temp.ts";

export const HOST = "git.pencil.test";
export const hasCurl = spawnSync("curl", ["--version"]).status === 0;

/** An HTTPS server for HOST with a certificate from a CA of the test's own (the proxy trusts it only when told). */
export async function upstreamServer() {
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
export async function proxyFor(reach: (r: ProxyRequest) => Promise<boolean>, upstreamCa?: string) {
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

export function curl(args: string[]): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn("curl", ["-sS", ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("close", (status) => resolve({ status, out }));
  });
}

/** Opens a CONNECT tunnel on the proxy's unix socket and resolves the raw socket once the proxy answered 200. */
export function tunnel(socketPath: string, target: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(socketPath, () => s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    s.once("data", (d) => (d.toString().startsWith("HTTP/1.1 200") ? resolve(s) : reject(new Error(d.toString()))));
    s.once("error", reject);
  });
}

/** A judge that records every request and lets it go. */
export function recordAll(asked: ProxyRequest[]) {
  return async (r: ProxyRequest) => {
    asked.push(r);
    return true;
  };
}

/** Resolves when a socket closed or failed. */
export function ended(s: Socket): Promise<void> {
  return new Promise((r) => {
    s.on("close", () => r());
    s.on("error", () => r());
  });
}

/** Sends `request` as written through a tunnel to `target`, TLS trusting the proxy's CA, and returns all the answer until the connection ends. */
export async function exchange(
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
export async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await Bun.sleep(25);
}

/**
 * A server that records the raw bytes each connection brings (TLS for HOST with the test's CA, or plain TCP), and
 * answers 200 once `done(bytes)` holds: what a real server would parse, whatever the proxy sent.
 */
export async function rawUpstream(tls: boolean, done: (bytes: string) => boolean) {
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
export function requestsIn(bytes: string): string[] {
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
export async function throughTunnel(
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
export function plainRequest(socketPath: string, request: string): Promise<string> {
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
