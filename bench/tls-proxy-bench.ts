// The command proxy's TLS interception: what a new host costs (its certificate, made by the run's CA) and what a
// request through an intercepted tunnel costs, against the same request sent straight to the server over its own
// fresh TLS connection (the baseline, measured in the same run). The proxy's upstream leg is a fresh connection too.
// Target: a new host's certificate ≤ 20 ms.
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import { startCommandProxy } from "../net/command-proxy.ts";
import { createRunCa } from "../net/run-ca.ts";
import { median, ms, target, timeRuns } from "./stats.ts";

const RUNS = 30;
const HOST = "bench.pencil.test";

const upstreamCa = await createRunCa("bench upstream CA");
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  tls: await upstreamCa.leafFor(HOST),
  fetch: () => new Response("ok"),
});
const dir = mkdtempSync(join(tmpdir(), "pencil-tls-bench-"));
const socketPath = join(dir, "proxy.sock");
const proxy = await startCommandProxy({
  socketPath,
  // Only the server's own name is let through; the others are answered 403 by the proxy (no upstream leg).
  reach: async (r) => r.host === HOST,
  resolveHost: () => "127.0.0.1",
  upstreamCa: upstreamCa.certPem,
});

/** One GET over TLS on `socket` (or to the server directly); resolves the whole response (any status). */
function get(host: string, options: ConnectionOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ servername: host, ...options });
    let out = "";
    s.on("secureConnect", () => s.write(`GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
    s.on("data", (d) => (out += d));
    s.on("close", () => (out.startsWith("HTTP/1.1 ") ? resolve(out) : reject(new Error(out || "no answer"))));
    s.on("error", reject);
  });
}

function tunnel(target: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(socketPath, () => s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    s.once("data", (d) => (d.toString().startsWith("HTTP/1.1 200") ? resolve(s) : reject(new Error(d.toString()))));
    s.once("error", reject);
  });
}

// Warm-up (JIT, the crypto provider), not counted.
for (let i = 0; i < 5; i++) {
  await (await createRunCa()).contextFor(`warm-${i}.test`);
  await get(HOST, { host: "127.0.0.1", port: server.port, ca: upstreamCa.certPem });
}

const caTimes = await timeRuns(RUNS, () => createRunCa());
const ca = await createRunCa();
let n = 0;
const leafTimes = await timeRuns(RUNS, () => ca.contextFor(`host-${n++}.pencil.test`));
const direct = await timeRuns(RUNS, () => get(HOST, { host: "127.0.0.1", port: server.port, ca: upstreamCa.certPem }));
// A new host each time: its certificate is made on the tunnel's first handshake; the proxy answers 403 itself.
let m = 0;
const newHost = await timeRuns(RUNS, async () => {
  const host = `new-${m++}.pencil.test`;
  return get(host, { socket: await tunnel(`${host}:${server.port}`), ca: proxy.caCertPem });
});
// The same refusal for a host whose certificate is already made.
const seenRefused = await timeRuns(RUNS, async () =>
  get("new-0.pencil.test", { socket: await tunnel(`new-0.pencil.test:${server.port}`), ca: proxy.caCertPem }),
);
const knownHost = await timeRuns(RUNS, async () =>
  get(HOST, { socket: await tunnel(`${HOST}:${server.port}`), ca: proxy.caCertPem }),
);

console.log(`run CA (key pair + self-signed certificate): ${ms(median(caTimes))} median`);
console.log(`a host's certificate (key pair + signature + TLS context): ${ms(median(leafTimes))} median`);
console.log(`GET over a fresh TLS connection straight to the server (baseline): ${ms(median(direct))} median`);
console.log(`GET through an intercepted tunnel, host seen before: ${ms(median(knownHost))} median`);
console.log(`a refused GET in a tunnel (proxy answers 403), host seen before: ${ms(median(seenRefused))} median`);
console.log(`a refused GET in a tunnel, a new host (certificate made on the way): ${ms(median(newHost))} median`);
console.log(
  `interception overhead: ${ms(median(knownHost) - median(direct))} a request (a tunnel and a second TLS handshake), plus ${ms(median(newHost) - median(seenRefused))} for a new host`,
);
target({
  name: "a host's certificate (key pair + signature + TLS context)",
  value: median(leafTimes),
  unit: "ms",
  max: 20,
});
target({
  name: "a new host through a tunnel, its certificate made on the way (over a host seen before)",
  value: median(newHost) - median(seenRefused),
  unit: "ms",
  max: 20,
  baseline: { name: "the same refused GET, host seen before", value: median(seenRefused) },
});
server.stop(true);
await proxy.close();
rmSync(dir, { recursive: true, force: true });
