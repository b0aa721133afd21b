import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect, type Socket } from "node:net";

/** One request or connection a command made through the proxy, as judged. */
export interface ProxyRequest {
  /** The HTTP method, or CONNECT for a tunnel (HTTPS: what goes through it is not visible). */
  method: string;
  host: string;
  port: number;
  /** The full URL of a plain HTTP request. */
  url?: string;
}

/** A request as recorded: what was asked for and whether it went through. */
export interface ProxyRecord extends ProxyRequest {
  allowed: boolean;
}

/** What startCommandProxy needs. */
export interface CommandProxyOptions {
  /** The unix socket to listen on (inside the scratch, reachable by the command's forwarder). */
  socketPath: string;
  /** The judge: resolves true to let the request go. Called once per plain request and once per tunnel. */
  reach: (r: ProxyRequest) => Promise<boolean>;
  /** Where a host name really goes (default: itself, resolved by the system); tests map names to 127.0.0.1. */
  resolveHost?: (host: string) => string;
}

/** A running proxy: its record and how to stop it. */
export interface CommandProxy {
  readonly log: ProxyRecord[];
  close(): Promise<void>;
}

const HOP_HEADERS = ["proxy-connection", "proxy-authorization", "connection", "keep-alive", "te", "trailer", "upgrade"];

/**
 * The only way out for a sandboxed command: an HTTP proxy (plain requests by
 * absolute URL, HTTPS by CONNECT) on a unix socket, judging every request by
 * host (and, for plain HTTP, by method) before anything is sent.
 */
export function startCommandProxy(options: CommandProxyOptions): Promise<CommandProxy> {
  const log: ProxyRecord[] = [];
  const resolve = options.resolveHost ?? ((h: string) => h);
  const sockets = new Set<Socket>();
  const server = createServer(async (req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
      if (url.protocol !== "http:") throw new Error("not http");
    } catch {
      res
        .writeHead(400, { "content-type": "text/plain" })
        .end("Pencil's proxy takes absolute http:// URLs (and CONNECT for https).\n");
      return;
    }
    const entry: ProxyRequest = {
      method: req.method ?? "GET",
      host: url.hostname,
      port: Number(url.port || 80),
      url: url.href,
    };
    const allowed = await judge(entry);
    if (!allowed) {
      req.resume();
      res
        .writeHead(403, { "content-type": "text/plain" })
        .end(`Pencil: the owner did not allow ${entry.method} ${entry.url}\n`);
      return;
    }
    const headers: IncomingHttpHeaders = { ...req.headers };
    for (const h of HOP_HEADERS) delete headers[h];
    const up = httpRequest(
      {
        host: resolve(entry.host),
        port: entry.port,
        method: entry.method,
        path: url.pathname + url.search,
        headers: { ...headers, host: url.host },
      },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`Pencil's proxy could not reach ${entry.host}: ${error.message}\n`);
    });
    req.pipe(up);
  });
  server.on("connect", async (req, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? "");
    if (!m) {
      client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    const entry: ProxyRequest = { method: "CONNECT", host: m[1]!, port: Number(m[2]) };
    if (!(await judge(entry))) {
      client.end(
        "HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nPencil: the owner did not allow this connection\n",
      );
      return;
    }
    const up = connect(entry.port, resolve(entry.host), () => {
      client.write("HTTP/1.1 200 Connection established\r\n\r\n");
      if (head.length > 0) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    up.on("error", () => client.destroy());
    client.on("close", () => up.destroy());
  });
  async function judge(entry: ProxyRequest): Promise<boolean> {
    let allowed = false;
    try {
      allowed = await options.reach(entry);
    } catch {
      allowed = false;
    }
    log.push({ ...entry, allowed });
    return allowed;
  }
  return new Promise((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => {
      resolvePromise({
        log,
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
