import { createServer, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";

/** One attempt a command made to reach the network while it was off: what it asked for, refused. */
interface RefusedAttempt {
  /** The request's method, or CONNECT for an HTTPS tunnel. */
  method: string;
  host: string;
  port: number;
  /** The full URL of a plain request; absent for a tunnel (only its host and port are known). */
  url?: string;
  allowed: false;
  refused: string;
}

/** A running refusing proxy: what it refused, and how to stop it. */
export interface RefusingProxy {
  readonly log: RefusedAttempt[];
  close(): Promise<void>;
}

/** The status line's reason: what most clients print of a refused tunnel (npm: "403 Network off … - GET https://…"). */
const REASON = "Network off for commands in Pencil (sandbox.network)";

const OFF = "the network is off for commands";

/** The words a refused request's body says: what was not reached, and the setting that opens the network. */
function refusalText(what: string): string {
  return `Pencil: ${OFF}, so ${what} was not reached. The owner can turn it on with "sandbox": {"network": true} in their settings; each host is then asked, or allowed by Net(host) rules.\n`;
}

/**
 * The proxy a command's HTTP(S)_PROXY points at while the network is off: on a unix socket in the scratch (the
 * namespace's forwarder leads there), it answers every plain request and every CONNECT at once with a 403 that
 * names the setting, and records the host. A client that honours the proxy variables then fails in milliseconds
 * with an error it prints, instead of retrying a resolver that cannot answer (npm waits about 70 s for that).
 * Nothing is ever connected to: no name is resolved, no socket opened but the one it listens on.
 */
export function startRefusingProxy(socketPath: string): Promise<RefusingProxy> {
  const log: RefusedAttempt[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    req.resume();
    const where = plainTarget(req);
    log.push({ method: req.method ?? "GET", ...where, allowed: false, refused: OFF });
    const body = JSON.stringify({ error: refusalText(where.url ?? where.host).trim() });
    res.writeHead(403, REASON, { "content-type": "application/json", connection: "close" }).end(`${body}\n`);
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.on("connect", (req: IncomingMessage, client: Socket) => {
    client.on("error", () => client.destroy());
    const m = /^(\[[^\]]*\]|[^:[\]]+):(\d{1,5})$/.exec(req.url ?? "");
    const host = (m?.[1] ?? req.url ?? "").replace(/^\[|\]$/g, "").toLowerCase();
    const port = m ? Number(m[2]) : 0;
    log.push({ method: "CONNECT", host, port, allowed: false, refused: OFF });
    const body = refusalText(`${host}${port ? `:${port}` : ""}`);
    client.end(
      `HTTP/1.1 403 ${REASON}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  // A WebSocket or other upgrade asked through the proxy: refused the same way, never left hanging.
  server.on("upgrade", (req: IncomingMessage, client: Socket) => {
    const where = plainTarget(req);
    log.push({ method: req.method ?? "GET", ...where, allowed: false, refused: OFF });
    client.end(`HTTP/1.1 403 ${REASON}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () =>
      resolve({
        log,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      }),
    );
  });
}

/** Where a plain proxy request was going: its absolute URL's host and port, else what it wrote. */
function plainTarget(req: IncomingMessage): { host: string; port: number; url?: string } {
  try {
    const url = new URL(req.url ?? "");
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    return { host: url.hostname.replace(/^\[|\]$/g, "").toLowerCase(), port, url: url.href };
  } catch {
    // Not a URL: the request is refused all the same, named by what it gave.
    return { host: req.headers.host ?? req.url ?? "", port: 0 };
  }
}
