import { describe, expect, test } from "bun:test";
import { scriptedApprover, seam } from "../support/command-seam.ts";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseRule } from "../../core/policy/policy.ts";
import { startCommandProxy } from "../../net/command-proxy.ts";
import { createRunCa } from "../../net/run-ca.ts";
import { createRunCommandTool, type StartProxy } from "../../tools/run-command.ts";
import type { NetRequest } from "../../core/policy/claims.ts";
import type { PencilTool } from "../../tools/tool.ts";
import type { CommandRecord } from "../../core/staging/command-record.ts";
import { hasGit, hasNamespace, RUNTIME_ENV, setup, tempDir, testFileName } from "../support/run-command-world.ts";

// Irreversible actions (git push, npm publish) made by a sandboxed command through Pencil's proxy, against local
// servers: reads go through, the push or publish is refused, nothing changes.

/** A git smart-HTTP server (git http-backend behind Bun; over HTTPS with `tls`) for the bare repository `repo.git` under `root`; records each request. */
function gitHttpServer(root: string, tls?: { cert: string; key: string }) {
  const seen: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    ...(tls ? { tls } : {}),
    async fetch(req) {
      const url = new URL(req.url);
      seen.push(`${req.method} ${url.pathname}`);
      const body = new Uint8Array(await req.arrayBuffer());
      const proc = Bun.spawn(["git", "http-backend"], {
        env: {
          GIT_PROJECT_ROOT: root,
          GIT_HTTP_EXPORT_ALL: "1",
          REQUEST_METHOD: req.method,
          PATH_INFO: url.pathname,
          QUERY_STRING: url.search.slice(1),
          CONTENT_TYPE: req.headers.get("content-type") ?? "",
          CONTENT_LENGTH: String(body.length),
          REMOTE_USER: "tester",
          REMOTE_ADDR: "127.0.0.1",
          PATH: process.env.PATH ?? "/usr/bin:/bin",
        },
        stdin: body,
        stdout: "pipe",
      });
      const out = Buffer.from(await new Response(proc.stdout).arrayBuffer());
      const split = out.indexOf("\r\n\r\n");
      const headers = new Headers();
      let status = 200;
      for (const line of out.subarray(0, split).toString().split("\r\n")) {
        const i = line.indexOf(":");
        if (line.slice(0, i).toLowerCase() === "status") status = Number.parseInt(line.slice(i + 1), 10);
        else headers.set(line.slice(0, i), line.slice(i + 1).trim());
      }
      return new Response(out.subarray(split + 4), { status, headers });
    },
  });
  return { server, seen };
}

/**
 * A registry stand-in (HTTPS with `upstreamCa`, whose certificate the proxy is told to trust) that records what it
 * receives and accepts any PUT, and a sandboxed package with a fake token for it, whose commands' requests are judged as
 * under a Net allow with nobody to ask: reads go unasked, anything else is refused.
 */
async function publishWorld(upstreamCa?: Awaited<ReturnType<typeof createRunCa>>) {
  const received: string[] = [];
  const registry = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    ...(upstreamCa ? { tls: await upstreamCa.leafFor("registry.pencil.test") } : {}),
    fetch(req) {
      received.push(`${req.method} ${new URL(req.url).pathname}`);
      return req.method === "PUT" ? new Response("{}", { status: 201 }) : new Response("{}", { status: 404 });
    },
  });
  const asked: NetRequest[] = [];
  const startProxy: StartProxy = (o) =>
    startCommandProxy({
      ...o,
      resolveHost: () => "127.0.0.1",
      ...(upstreamCa ? { upstreamCa: upstreamCa.certPem } : {}),
    });
  const url = `${upstreamCa ? "https" : "http"}://registry.pencil.test:${registry.port}/`;
  const { run, ctx } = setup(
    "namespace",
    {
      "package.json": JSON.stringify({ name: "pencil-publish-probe", version: "1.0.0" }),
      "index.js": "module.exports = 1;\n",
      // Not named .npmrc (a credential file the policy hides): a fake token so npm gets as far as the request.
      "publish.npmrc": `//registry.pencil.test:${registry.port}/:_authToken=fake-token\n`,
    },
    { network: true, startProxy, timeoutMs: 60_000 },
  );
  ctx.reach = async (r) => {
    asked.push(r);
    return r.method === "GET";
  };
  return { registry, received, asked, run, url };
}

/**
 * A bare remote served over git's smart HTTP (HTTPS with `upstreamCa`, whose certificate the proxy is told to trust),
 * and a sandboxed workspace with one commit whose commands reach it through the proxy, judged as under a
 * Net(git.pencil.test) allow with nobody to ask: reads go unasked, anything else is refused.
 */
async function pushWorld(upstreamCa?: Awaited<ReturnType<typeof createRunCa>>) {
  const remote = tempDir("pencil-git-remote-");
  expect(spawnSync("git", ["init", "-q", "--bare", join(remote, "repo.git")]).status).toBe(0);
  spawnSync("git", ["-C", join(remote, "repo.git"), "config", "http.receivepack", "true"]);
  const { server, seen } = gitHttpServer(remote, upstreamCa ? await upstreamCa.leafFor("git.pencil.test") : undefined);
  const asked: NetRequest[] = [];
  const startProxy: StartProxy = (o) =>
    startCommandProxy({
      ...o,
      resolveHost: (h) => (h === "git.pencil.test" ? "127.0.0.1" : h),
      ...(upstreamCa ? { upstreamCa: upstreamCa.certPem } : {}),
    });
  const { root, run, ctx } = setup("namespace", { "a.txt": "a\n" }, { network: true, startProxy });
  for (const args of [
    ["init", "-q"],
    ["add", "."],
    ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"],
  ])
    spawnSync("git", ["-C", root, ...args]);
  ctx.reach = async (r: NetRequest) => {
    asked.push(r);
    return r.method === "GET";
  };
  const records: CommandRecord[] = [];
  ctx.recordCommand = (r) => records.push(r);
  return { remote, server, seen, run, asked, records };
}

const hasGitHttp =
  hasGit &&
  spawnSync("git", ["http-backend", "-h"]).error === undefined &&
  existsSync(join(spawnSync("git", ["--exec-path"], { encoding: "utf8" }).stdout.trim(), "git-http-backend"));
if (hasNamespace && hasGit && !hasGitHttp)
  console.warn(`${testFileName()}: git http-backend is not installed here; the git push tests are SKIPPED.`);

describe("irreversible actions through Pencil's proxy (namespace, network on)", () => {
  test.skipIf(!hasNamespace || !hasGitHttp)(
    "git push over http, plain or disguised: the GETs go through, the push's POST is refused, the repository is unchanged",
    async () => {
      const { remote, server, seen, run, asked, records } = await pushWorld();
      try {
        const remoteUrl = `http://git.pencil.test:${server.port}/repo.git`;
        for (const command of [
          `git push ${remoteUrl} HEAD:refs/heads/main`,
          `g=git; $g push ${remoteUrl} HEAD:refs/heads/main`,
        ]) {
          const out = await run(command);
          expect(out).toContain("REFUSED: POST " + remoteUrl + "/git-receive-pack");
          expect(out).toContain("Refused requests were not sent");
        }
        // The remote saw the ref advertisement, never the push itself.
        expect(seen.some((x) => x.startsWith("GET /repo.git/info/refs"))).toBe(true);
        expect(seen.some((x) => x.startsWith("POST"))).toBe(false);
        expect(spawnSync("git", ["-C", join(remote, "repo.git"), "for-each-ref"], { encoding: "utf8" }).stdout).toBe(
          "",
        );
        expect(asked.filter((r) => r.method === "POST").length).toBe(2);
        expect(records.map((r) => [r.network, r.connections?.some((c) => c.method === "POST" && !c.allowed)])).toEqual([
          ["proxy", true],
          ["proxy", true],
        ]);
      } finally {
        server.stop(true);
      }
    },
    60_000,
  );

  const hasNpm = spawnSync("npm", ["--version"]).status === 0;
  if (hasNamespace && !hasNpm)
    console.warn(`${testFileName()}: npm is not installed here; the npm publish tests are SKIPPED.`);
  test.skipIf(!hasNamespace || !hasNpm)(
    "npm publish to a local registry stand-in: the PUT is refused and the registry receives nothing",
    async () => {
      const { registry, received, asked, run, url } = await publishWorld();
      try {
        const out = await run(`npm publish --userconfig publish.npmrc --registry ${url} --no-audit --no-fund`);
        expect(out).toContain(`REFUSED: PUT ${url}pencil-publish-probe`);
        expect(received.filter((x) => x.startsWith("PUT"))).toEqual([]);
        expect(asked.some((r) => r.method === "PUT")).toBe(true);
      } finally {
        registry.stop(true);
      }
    },
    60_000,
  );

  test.skipIf(!hasNamespace || !hasNpm)(
    "npm publish to an https registry stand-in: npm trusts the run's CA, its PUT is refused and the registry receives nothing",
    async () => {
      const { registry, received, run, url } = await publishWorld(await createRunCa("test upstream CA"));
      try {
        const out = await run(`npm publish --userconfig publish.npmrc --registry ${url} --no-audit --no-fund`);
        expect(out).toContain(`REFUSED: PUT ${url}pencil-publish-probe`);
        expect(received.filter((x) => x.startsWith("PUT"))).toEqual([]);
      } finally {
        registry.stop(true);
      }
    },
    60_000,
  );

  test.skipIf(!hasNamespace)(
    "with nobody to judge (no seam), every request is refused; a request inside an https tunnel too",
    async () => {
      const startProxy: StartProxy = (o) => startCommandProxy({ ...o, resolveHost: () => "127.0.0.1" });
      const { run } = setup("namespace", {}, { network: true, startProxy });
      const out = await run(
        "curl -s -o /dev/null -w '%{http_code}\\n' -X PUT --data x http://registry.pencil.test:9/pkg; curl -sS -w 'https:%{http_code}\\n' https://registry.pencil.test:9/index.json",
      );
      expect(out).toContain("REFUSED: PUT http://registry.pencil.test:9/pkg");
      expect(out).toContain("REFUSED: GET https://registry.pencil.test:9/index.json");
      expect(out).toContain("Pencil: the owner did not allow GET https://registry.pencil.test:9/index.json");
      expect(out).toContain("https:403");
    },
    60_000,
  );

  test.skipIf(!hasNamespace || !hasGitHttp)(
    "over https: the command trusts the run's CA; a GET goes through, git push and an upload (plain or disguised) are refused and nothing changes",
    async () => {
      // The real server's certificate comes from a CA the test owns; the proxy (not the command) is told to trust it.
      const { remote, server, seen, run, asked, records } = await pushWorld(await createRunCa("test upstream CA"));
      try {
        const remoteUrl = `https://git.pencil.test:${server.port}/repo.git`;
        const read = await run(`git ls-remote ${remoteUrl} && echo LS-REMOTE-OK`);
        expect(read).toContain("LS-REMOTE-OK");
        expect(read).toContain(`allowed: GET ${remoteUrl}/info/refs?service=git-upload-pack`);
        for (const command of [
          `git push ${remoteUrl} HEAD:refs/heads/main`,
          `g=git; $g push ${remoteUrl} HEAD:refs/heads/main`,
          `c=curl; $c -sS -X POST --data-binary @a.txt https://git.pencil.test:${server.port}/upload`,
        ]) {
          const out = await run(command);
          expect(out).toMatch(/REFUSED: POST https:\/\/git\.pencil\.test:\d+\/(repo\.git\/git-receive-pack|upload)/);
          expect(out).toContain("Refused requests were not sent");
        }
        expect(seen.some((x) => x.startsWith("GET /repo.git/info/refs"))).toBe(true);
        expect(seen.some((x) => x.startsWith("POST"))).toBe(false);
        expect(spawnSync("git", ["-C", join(remote, "repo.git"), "for-each-ref"], { encoding: "utf8" }).stdout).toBe(
          "",
        );
        expect(asked.filter((r) => r.method === "POST").map((r) => r.url?.startsWith("https://"))).toEqual([
          true,
          true,
          true,
        ]);
        expect(records.slice(1).map((r) => r.connections?.some((c) => c.method === "POST" && !c.allowed))).toEqual([
          true,
          true,
          true,
        ]);
      } finally {
        server.stop(true);
      }
    },
    90_000,
  );

  test.skipIf(!hasNamespace)(
    "through the policy seam, with Net(host) allowed: an https GET goes unasked, an upload (disguised) is asked and, with nobody to say yes, refused",
    async () => {
      const upstreamCa = await createRunCa("test upstream CA");
      const seen: string[] = [];
      const server = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        tls: await upstreamCa.leafFor("git.pencil.test"),
        fetch: (req) => {
          seen.push(`${req.method} ${new URL(req.url).pathname}`);
          return new Response("ok\n");
        },
      });
      try {
        const startProxy: StartProxy = (o) =>
          startCommandProxy({ ...o, resolveHost: () => "127.0.0.1", upstreamCa: upstreamCa.certPem });
        const tool = createRunCommandTool({ sandbox: "namespace", network: true, startProxy, parentEnv: RUNTIME_ENV });
        const approver = scriptedApprover([]);
        const rules = [parseRule("Net(git.pencil.test)", "allow", "test"), parseRule("Run(*)", "allow", "test")];
        const { exec } = seam([tool as unknown as PencilTool], rules, approver);
        const base = `https://git.pencil.test:${server.port}`;
        const out = await exec("run_command", `curl -sS ${base}/info; c=curl; $c -sS -X POST --data x ${base}/upload`);
        expect(out).toContain(`allowed: GET ${base}/info`);
        expect(out).toContain(`REFUSED: POST ${base}/upload`);
        expect(approver.questions.map((q) => q.subject)).toEqual([`POST ${base}/upload`]);
        expect(seen).toEqual(["GET /info"]);
      } finally {
        server.stop(true);
      }
    },
    60_000,
  );

  test.skipIf(!hasNamespace)(
    "a client that ignores the CA variables fails closed, and a tunnel that does not carry TLS is refused",
    async () => {
      let reached = 0;
      const server = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch: () => {
          reached++;
          return new Response("reached");
        },
      });
      try {
        const startProxy: StartProxy = (o) => startCommandProxy({ ...o, resolveHost: () => "127.0.0.1" });
        // A client with a trust store of its own (here: a CA file that is not the run's).
        const own = (await createRunCa("a trust store of its own")).certPem;
        const { run, ctx } = setup("namespace", { "own-trust.txt": own }, { network: true, startProxy });
        ctx.reach = async () => true;
        const url = `registry.pencil.test:${server.port}`;
        const out = await run(
          `env -u CURL_CA_BUNDLE -u SSL_CERT_FILE curl -sS --cacert own-trust.txt https://${url}/ || echo "untrusted:$?"; ` +
            `curl -sS --proxytunnel http://${url}/ || echo "raw:$?"`,
        );
        expect(out).toContain("untrusted:");
        expect(out).toContain("raw:");
        expect(out).toContain(`REFUSED: CONNECT ${url} (the TLS handshake failed`);
        expect(out).toContain(`REFUSED: CONNECT ${url} (not TLS`);
        expect(reached).toBe(0);
      } finally {
        server.stop(true);
      }
    },
    60_000,
  );
});
