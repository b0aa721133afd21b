import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { type ProxyRequest, startCommandProxy } from "../../net/command-proxy.ts";
import { tempDir } from "../support/temp.ts";
import { HOST, ended, plainRequest, proxyFor, rawUpstream, recordAll, tunnel } from "../support/command-proxy-world.ts";

// The command proxy's boundary: the owner's machine and its every address out of reach, an odd answer never
// brings it down, nothing of a request leaves before it is allowed.

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
