import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { request as httpsRequest } from "node:https";
import { lookup } from "node:dns/promises";
import { isIP, type Socket } from "node:net";
import { hostname as machineName, networkInterfaces } from "node:os";
import { getCACertificates, rootCertificates, TLSSocket } from "node:tls";
import { ownMachineReason, refusedHostName } from "./net-guard.ts";

/** One request a command made through the proxy, as judged. */
export interface ProxyRequest {
  /**
   * The HTTP method the server is asked to apply (of a plain request or of one inside an HTTPS tunnel; a
   * method-override header's when the request carries one), or CONNECT for a tunnel refused as such.
   */
  method: string;
  host: string;
  port: number;
  /** The full URL (http:// for plain requests, https:// for requests inside a tunnel). */
  url?: string;
}

/** A request as recorded: what was asked for and whether it went through. */
export interface ProxyRecord extends ProxyRequest {
  allowed: boolean;
  /** Why the proxy refused it without asking (not TLS, not HTTP/1.1, …); absent when the judge decided. */
  refused?: string;
}

/** What startCommandProxy needs. */
export interface CommandProxyOptions {
  /** The unix socket to listen on (inside the scratch, reachable by the command's forwarder). */
  socketPath: string;
  /** The judge: resolves true to let the request go. Called once per request (plain, or inside an HTTPS tunnel). */
  reach: (r: ProxyRequest) => Promise<boolean>;
  /**
   * Where a host name really goes (default: the system's resolver, and an address of this machine or of the
   * link-local network refused). TEST ONLY: tests map names to their servers on 127.0.0.1, which this trusts.
   */
  resolveHost?: (host: string) => string;
  /** The certificates upstream HTTPS servers are verified against (PEM; default the system's trust store); tests give their own CA. */
  upstreamCa?: string | string[];
  /** Milliseconds a tunnel may stay silent before its first bytes show it is TLS (default 10 000). */
  firstBytesTimeoutMs?: number;
}

/** A running proxy: its record, the CA a command must trust for HTTPS through it, and how to stop it. */
export interface CommandProxy {
  readonly log: ProxyRecord[];
  /** This proxy's own CA certificate (PEM): it signs the certificates the command sees inside HTTPS tunnels. */
  readonly caCertPem: string;
  /** The system's trusted certificates followed by this proxy's CA (PEM): the bundle for clients that replace their trust store. */
  readonly trustBundlePem: string;
  close(): Promise<void>;
}

/** Where a request inside a tunnel goes: the host and port the CONNECT named. */
interface Tunnel {
  host: string;
  port: number;
}

// Transfer-Encoding too: the body is framed anew on the way up, as the proxy's own parser read it.
const HOP_HEADERS = [
  "proxy-connection",
  "proxy-authorization",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
  "transfer-encoding",
];

/** The system's trusted certificates (PEM), else the runtime's bundled roots. */
function systemCertificates(): string[] {
  try {
    const system = getCACertificates("system");
    if (system.length > 0) return system;
  } catch {
    // an older runtime without getCACertificates: the bundled roots below
  }
  return [...rootCertificates];
}

/**
 * Headers through which web frameworks and the proxies in front of them let a request (even a GET) ask for another
 * method, e.g. DELETE.
 */
const METHOD_OVERRIDES = [
  "x-http-method-override",
  "x-http-method",
  "x-method-override",
  "x-original-method",
  "x-forwarded-method",
];

/** Methods that ask a server only to read. */
const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Bytes of a form body read before a request is judged, to find the `_method` field in it. */
const FORM_READ_CAP = 64 * 1024;

/** Whether a request's body is a form a framework would read `_method` from (URL-encoded or multipart). */
function isForm(req: IncomingMessage): boolean {
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  return type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data");
}

/** The `_method` fields of a form body (URL-encoded, or multipart's `name="_method"` parts). */
function formMethods(req: IncomingMessage, body: string): string[] {
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  if (type.startsWith("application/x-www-form-urlencoded")) {
    const found: string[] = [];
    for (const [k, v] of new URLSearchParams(body)) if (k.toLowerCase() === "_method") found.push(v);
    return found;
  }
  const parts = /\bname\s*=\s*"?_method"?[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*\r?\n([^\r\n]*)/gi;
  return [...body.matchAll(parts)].map((m) => m[1]!);
}

/**
 * The method a request asks the server to apply: a method another one names (an override header, `?_method=` in the
 * URL, a `_method` field of a form body) when it names one that does more than read; for a GET, HEAD or OPTIONS,
 * also one that only reads; else its own. Never the other way: a POST that says it is a GET is still a POST to a
 * server that ignores the override. `formUnread` says a form body was too large to be read whole: a reading request
 * carrying one is judged as a POST, since what it asks is not known.
 */
function effectiveMethod(req: IncomingMessage, url: URL, form: string[], formUnread: boolean): string {
  const own = req.method ?? "GET";
  const named: string[] = [];
  for (const h of METHOD_OVERRIDES) {
    const value = req.headers[h];
    named.push(...(Array.isArray(value) ? value : value === undefined ? [] : [value]));
  }
  for (const [k, v] of url.searchParams) if (k.toLowerCase() === "_method") named.push(v);
  named.push(...form);
  const methods = named.map((m) => m.trim().toUpperCase()).filter((m) => m !== "" && m !== own);
  const acting = methods.find((m) => !READ_METHODS.has(m));
  if (acting) return acting;
  if (!READ_METHODS.has(own)) return own;
  if (formUnread) return "POST";
  return methods[0] ?? own;
}

/** Reads up to FORM_READ_CAP bytes of `req`'s body; the stream is left paused after them with whatever follows. */
function readFormStart(req: IncomingMessage): Promise<{ head: Buffer; whole: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (whole: boolean) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onEnd);
      req.pause();
      resolve({ head: Buffer.concat(chunks), whole });
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > FORM_READ_CAP) done(false);
    };
    const onEnd = () => done(true);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onEnd);
  });
}

/** A TLS record carrying a handshake (ClientHello): content type 22, major version 3. */
function looksLikeTls(first: Buffer): boolean {
  return first.length >= 2 && first[0] === 0x16 && first[1] === 0x03;
}

/** `host` or `host:port` as it appears in a URL and a Host header (the port left out when it is the scheme's own). */
function authority(t: Tunnel, defaultPort = 443): string {
  const host = isIP(t.host) === 6 ? `[${t.host}]` : t.host;
  return t.port === defaultPort ? host : `${host}:${t.port}`;
}

/** A DNS name: letters, digits, `-` and `_` in dot-separated labels, one trailing dot allowed. */
const HOST_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/i;

/**
 * A host as the rules judge it, the record shows it and the connection reaches it: lower case, without a
 * trailing dot (DNS reads `host.` as `host`), an IPv4 address in dotted form however it was spelt (a number,
 * `127.1`, hex, or inside an IPv6 address), an IPv6 address without brackets; null when it is neither a
 * name nor an address (`a/b.example.com`, `user@host`), which no rule could judge.
 */
export function canonicalHost(written: string): string | null {
  const bare = written.startsWith("[") && written.endsWith("]") ? written.slice(1, -1) : written;
  if (isIP(bare) !== 6 && !HOST_NAME.test(bare)) return null;
  let host: string;
  try {
    // WHATWG URL parsing writes IPv4 in every spelling as dotted decimal, and IPv6 in its shortest form.
    host = new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return null;
  }
  if (host.startsWith("[")) {
    host = host.slice(1, -1);
    const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
    if (mapped) {
      const hi = Number.parseInt(mapped[1]!, 16);
      const lo = Number.parseInt(mapped[2]!, 16);
      host = `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
    }
    return host;
  }
  host = host.replace(/\.$/, "");
  return host === "" ? null : host;
}

/**
 * Why an address is this machine or its link (loopback, unspecified, "this network", link-local with the
 * cloud metadata service, or any address of any local interface, read now: the LAN address, a Docker bridge),
 * which the sandbox's private network exists to keep out of reach; null otherwise. Other private networks
 * (a company registry on 10.x) stay for the rules to judge.
 */
function ownMachine(address: string): string | null {
  return ownMachineReason(address, networkInterfaces());
}

/**
 * Why `host` is this machine or its link, known without resolving it (an address, `localhost`, or this
 * machine's own name); null when unknown yet.
 */
function ownMachineUnresolved(host: string): string | null {
  if (!isIP(host)) {
    const own = machineName().toLowerCase();
    if (own !== "" && (host === own || host === `${own}.local`)) return `${host} is this machine's own name`;
    return refusedHostName(host);
  }
  const why = ownMachine(host);
  return why ? `${host} is this machine or its link: ${why}` : null;
}

/** A port a connection can go to: 1 to 65535 (port 0 would silently become the scheme's default). */
function validPort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65535;
}

/**
 * The only way out for a sandboxed command: an HTTP proxy on a unix socket.
 * Plain requests come by absolute URL; HTTPS comes by CONNECT, and the tunnel
 * is opened here, not passed through: the proxy presents a certificate for the
 * host signed by its own per-run CA, reads the HTTP/1.1 requests inside, and
 * judges every request, plain or inside a tunnel, by method and full URL before
 * anything is sent. A tunnel that does not carry TLS with HTTP/1.1 is refused.
 */
export async function startCommandProxy(options: CommandProxyOptions): Promise<CommandProxy> {
  const log: ProxyRecord[] = [];
  /** The address a request to `host` goes to, or why none may be: resolved once, so what was checked is what is reached. */
  async function addressOf(host: string): Promise<{ address: string } | { refused: string }> {
    if (options.resolveHost) return { address: options.resolveHost(host) };
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
    } catch (error) {
      return { refused: `${host} could not be resolved (${(error as NodeJS.ErrnoException).code ?? "no address"})` };
    }
    if (addresses.length === 0) return { refused: `${host} has no address` };
    for (const a of addresses) {
      const why = ownMachine(a);
      if (why)
        return { refused: `${host === a ? a : `${host} resolves to ${a}, which`} is this machine or its link: ${why}` };
    }
    // One address is dialled (the one checked): IPv4 first, which more hosts reach than IPv6.
    return { address: addresses.find((a) => isIP(a) === 4) ?? addresses[0]! };
  }
  const system = systemCertificates();
  const upstreamCa = options.upstreamCa ?? system;
  const firstBytesTimeoutMs = options.firstBytesTimeoutMs ?? 10_000;
  // Loaded with the first proxy, not with Pencil: the X.509 library takes ~90 ms to load.
  const { createRunCa } = await import("./run-ca.ts");
  const ca = await createRunCa();
  const sockets = new Set<Socket>();
  const tunnels = new WeakMap<object, Tunnel>();

  async function handle(req: IncomingMessage, res: ServerResponse, tunnel: Tunnel | undefined): Promise<void> {
    let url: URL;
    let where: Tunnel;
    try {
      if (tunnel) {
        // Origin form only: an absolute URL inside a tunnel could name another host than the one judged.
        if (!req.url?.startsWith("/")) throw new Error("not origin-form");
        where = tunnel;
        url = new URL(`https://${authority(tunnel)}${req.url}`);
      } else {
        const written = new URL(req.url ?? "");
        if (written.protocol !== "http:") throw new Error("not http");
        const host = canonicalHost(written.hostname);
        const port = Number(written.port || 80);
        if (host === null || !validPort(port)) throw new Error("no host");
        where = { host, port };
        url = new URL(`http://${authority(where, 80)}${written.pathname}${written.search}`);
      }
    } catch {
      req.resume();
      res
        .writeHead(400, { "content-type": "text/plain" })
        .end(
          tunnel
            ? "Pencil's proxy takes requests for the tunnel's own host (origin-form paths) inside an HTTPS tunnel.\n"
            : "Pencil's proxy takes absolute http:// URLs (and CONNECT for https).\n",
        );
      return;
    }
    // A form body is read before the request is judged: a `_method` field in it names what the server is asked to do.
    const form = isForm(req) ? await readFormStart(req) : null;
    const entry: ProxyRequest = {
      // A GET that asks, by header, query or form field, to be taken as a DELETE is judged (and asked about) as the DELETE.
      method: effectiveMethod(
        req,
        url,
        form ? formMethods(req, form.head.toString("latin1")) : [],
        form !== null && !form.whole,
      ),
      host: where.host,
      port: where.port,
      url: url.href,
    };
    if (req.headers["transfer-encoding"] !== undefined && req.headers["content-length"] !== undefined) {
      // Two framings: where this request ends would be a guess, and a request hidden in its body would go unjudged.
      req.resume();
      res
        .writeHead(400, { "content-type": "text/plain", connection: "close" })
        .end("Pencil's proxy refuses a request with both Transfer-Encoding and Content-Length.\n");
      return;
    }
    // This machine and the cloud metadata service are out of reach whatever the rules or the owner's answer:
    // refused unasked when the host shows it, else after resolving, which happens only once the request is allowed
    // (resolving a name sends it out, and a name can carry data: c2VjcmV0.attacker.example).
    const known = ownMachineUnresolved(entry.host);
    if (known !== null) {
      req.resume();
      log.push({ ...entry, allowed: false, refused: known });
      res
        .writeHead(403, { "content-type": "text/plain" })
        .end(`Pencil's proxy does not reach ${entry.url}: ${known}.\n`);
      return;
    }
    const record = await judge(entry);
    if (!record.allowed) {
      req.resume();
      res
        .writeHead(403, { "content-type": "text/plain" })
        .end(`Pencil: the owner did not allow ${entry.method} ${entry.url}\n`);
      return;
    }
    const reached = await addressOf(entry.host);
    if ("refused" in reached) {
      req.resume();
      record.allowed = false;
      record.refused = reached.refused;
      res
        .writeHead(403, { "content-type": "text/plain" })
        .end(`Pencil's proxy does not reach ${entry.url}: ${reached.refused}.\n`);
      return;
    }
    const headers: IncomingHttpHeaders = { ...req.headers };
    for (const h of HOP_HEADERS) delete headers[h];
    // A body of unknown length goes up chunked, said so: left unframed after the head of a GET, HEAD or OPTIONS
    // (which the client sends bare), the server would read it as further requests that nobody judged.
    if (req.headers["transfer-encoding"] !== undefined) headers["transfer-encoding"] = "chunked";
    const target = {
      host: reached.address,
      port: entry.port,
      method: req.method ?? "GET",
      path: url.pathname + url.search,
      // The server sees the host that was judged, whatever Host the command wrote.
      headers: { ...headers, host: url.host },
    };
    const unreachable = (why: string) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`Pencil's proxy could not reach ${entry.host}: ${why}\n`);
    };
    const answer = (upRes: IncomingMessage) => {
      try {
        // Throws on a status Node will not write (000, 099): here, outside any handler, that would end Pencil.
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      } catch (error) {
        upRes.destroy();
        unreachable(`its answer cannot be passed on (${(error as Error).message})`);
        return;
      }
      upRes.on("error", () => res.destroy());
      upRes.pipe(res);
    };
    // Upstream over HTTPS: a fresh connection, the real server's certificate verified for the judged host name.
    const up = tunnel
      ? httpsRequest(
          {
            ...target,
            agent: false,
            ca: upstreamCa,
            rejectUnauthorized: true,
            ...(isIP(entry.host) ? {} : { servername: entry.host }),
          },
          answer,
        )
      : httpRequest(target, answer);
    up.on("error", (error) => unreachable(error.message));
    // No upgrade was asked for (the headers that ask are dropped): a server that switches anyway gets no stream.
    up.on("upgrade", (_upRes: IncomingMessage, socket: Socket) => {
      socket.destroy();
      unreachable("it switched protocols (101) unasked");
    });
    // A command that hangs up mid-request or mid-answer ends the upstream request too, never the proxy.
    req.on("error", () => up.destroy());
    res.on("error", () => up.destroy());
    // What was read to judge the form goes first, exactly as the command sent it; the rest follows as it comes.
    if (form && form.head.length > 0) up.write(form.head);
    if (form?.whole) up.end();
    else req.pipe(up);
  }

  // Whatever a request or its server does, a failure ends that request, never the Pencil process it runs in.
  const serve = (req: IncomingMessage, res: ServerResponse, tunnel: Tunnel | undefined) =>
    handle(req, res, tunnel).catch(() => res.destroy());
  const server = createServer((req, res) => serve(req, res, undefined));
  // Requests inside HTTPS tunnels: parsed by Node's HTTP/1.1 server from the deciphered stream, never listening anywhere.
  const inner = createServer((req, res) => serve(req, res, tunnels.get(req.socket)));
  inner.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    const tunnel = tunnels.get(socket);
    if (tunnel && error.code !== "ECONNRESET")
      refuse(tunnel, `not valid HTTP/1.1 inside the tunnel: ${error.code ?? error.message}`);
    socket.destroy();
  });
  inner.on("upgrade", (req: IncomingMessage, socket: Socket) => {
    const tunnel = tunnels.get(socket);
    if (tunnel)
      log.push({
        method: req.method ?? "GET",
        host: tunnel.host,
        port: tunnel.port,
        url: `https://${authority(tunnel)}${req.url ?? ""}`,
        allowed: false,
        refused: "a protocol upgrade (WebSocket, HTTP/2) inside the tunnel",
      });
    socket.destroy();
  });
  // A tunnel inside the tunnel would name a host nobody judged; left unanswered, it would hold the connection open.
  inner.on("connect", (req: IncomingMessage, socket: Socket) => {
    const tunnel = tunnels.get(socket);
    if (tunnel) refuse(tunnel, `a CONNECT to ${req.url ?? "?"} inside the tunnel`);
    socket.destroy();
  });
  server.on("upgrade", (req: IncomingMessage, socket: Socket) => {
    let where: (Tunnel & { path: string }) | null = null;
    try {
      const url = new URL(req.url ?? "");
      const host = canonicalHost(url.hostname);
      if (host !== null) where = { host, port: Number(url.port || 80), path: url.pathname + url.search };
    } catch {
      // not an absolute URL: recorded by what it wrote
    }
    log.push({
      method: req.method ?? "GET",
      host: where?.host ?? req.url ?? "",
      port: where?.port ?? 0,
      ...(where ? { url: `http://${authority(where, 80)}${where.path}` } : {}),
      allowed: false,
      refused: "a protocol upgrade (WebSocket, HTTP/2)",
    });
    socket.destroy();
  });

  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    const m = /^(\[[^\]]*\]|[^:[\]]+):(\d{1,5})$/.exec(req.url ?? "");
    const host = m ? canonicalHost(m[1]!) : null;
    const port = m ? Number(m[2]) : 0;
    if (host === null || !validPort(port)) {
      // Judged by another name than the one the connection would reach, or by none: refused before any rule is read.
      log.push({
        method: "CONNECT",
        host: req.url ?? "",
        port,
        allowed: false,
        refused: "not a host name or address and a port",
      });
      client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    const tunnel: Tunnel = { host, port };
    // Nothing reaches the host yet: the requests inside are judged one by one.
    client.write("HTTP/1.1 200 Connection established\r\n\r\n");
    const timer = setTimeout(() => {
      client.off("data", first);
      refuse(tunnel, "the tunnel stayed silent: not a TLS client");
      client.destroy();
    }, firstBytesTimeoutMs);
    client.on("close", () => clearTimeout(timer));
    const first = (chunk: Buffer) => {
      clearTimeout(timer);
      client.pause();
      const bytes = head.length > 0 ? Buffer.concat([head, chunk]) : chunk;
      if (!looksLikeTls(bytes)) {
        refuse(tunnel, "not TLS: a raw stream, e.g. SSH");
        client.destroy();
        return;
      }
      client.unshift(bytes);
      void intercept(client, tunnel);
    };
    if (head.length > 0) first(Buffer.alloc(0));
    else client.once("data", first);
  });

  async function intercept(client: Socket, tunnel: Tunnel): Promise<void> {
    let context: Awaited<ReturnType<typeof ca.contextFor>>;
    try {
      context = await ca.contextFor(tunnel.host);
    } catch (error) {
      refuse(tunnel, `no certificate could be made for the host (${(error as Error).message})`);
      client.destroy();
      return;
    }
    const tls = new TLSSocket(client, { isServer: true, secureContext: context, ALPNProtocols: ["http/1.1"] });
    tunnels.set(tls, tunnel);
    let secure = false;
    // A handshake begun and never finished holds nothing of the host, but must not hold the tunnel open either.
    const deadline = setTimeout(() => {
      if (secure) return;
      refuse(tunnel, "the TLS handshake did not finish in time");
      tls.destroy();
      client.destroy();
    }, firstBytesTimeoutMs);
    client.on("close", () => clearTimeout(deadline));
    tls.on("secure", () => {
      secure = true;
      clearTimeout(deadline);
      inner.emit("connection", tls);
    });
    tls.on("error", (error) => {
      if (!secure)
        refuse(
          tunnel,
          `the TLS handshake failed: the client does not trust this run's CA (the file SSL_CERT_FILE names) or offers no HTTP/1.1; ${error.message}`,
        );
      tls.destroy();
      client.destroy();
    });
  }

  function refuse(tunnel: Tunnel, why: string): void {
    log.push({ method: "CONNECT", host: tunnel.host, port: tunnel.port, allowed: false, refused: why });
  }

  /** Asks the judge about `entry` and records its answer; the record is returned so a later refusal can amend it. */
  async function judge(entry: ProxyRequest): Promise<ProxyRecord> {
    let allowed = false;
    try {
      allowed = await options.reach(entry);
    } catch {
      allowed = false;
    }
    const record: ProxyRecord = { ...entry, allowed };
    log.push(record);
    return record;
  }

  return new Promise((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => {
      resolvePromise({
        log,
        caCertPem: ca.certPem,
        trustBundlePem: `${[...system, ca.certPem].map((c) => c.trim()).join("\n")}\n`,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
            server.closeAllConnections?.();
          }),
      });
    });
  });
}
