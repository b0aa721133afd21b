import { afterEach, describe, expect, test } from "bun:test";
import {
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  writeFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
} from "node:fs";
import { join, relative } from "node:path";
import { type Approver, nobodyApprover, type PermissionQuestion } from "../../../core/policy/approver.ts";
import { programDirs } from "../../../tools/mcp/program.ts";
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { startCommandProxy } from "../../../net/command-proxy.ts";
import type { McpServerConfig } from "../../../tools/mcp/config.ts";
import { openMcpSession, type McpSession } from "../../../tools/mcp/connect.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { runCli } from "../../support/cli.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

// The real @modelcontextprotocol/server-filesystem, started the way the docs say (node <package>/dist/index.js <dir>),
// against a workspace holding hard links to secrets and symlinks out of it.

const FS_PACKAGE = realpathSync(join(import.meta.dir, "../../../node_modules/@modelcontextprotocol/server-filesystem"));
const FS_SERVER = join(FS_PACKAGE, "dist/index.js");
const hasNamespace = sandboxAvailable();
if (!hasNamespace) console.warn("mcp-filesystem.test: no namespace sandbox here; the confinement tests are SKIPPED.");

const KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n";

const toolResults = (body: any): string[] =>
  body.messages.filter((m: any) => m.role === "tool").map((m: any) => String(m.content));

describe("the real filesystem MCP server", () => {
  test.skipIf(!hasNamespace)(
    "started as documented, allowed with Mcp(fs/*): it reads the workspace, and never a secret through a hard link to it",
    async () => {
      const { workspace, home, groq, env } = await modelWorld({
        "a.txt": "alpha\n",
        ".env": "API_KEY=s3cret-env-value\n",
      });
      writeTree(home, { ".ssh/id_ed25519": KEY });
      // Other names of the owner's key and of the workspace's own .env, under innocent names.
      linkSync(join(home, ".ssh/id_ed25519"), join(workspace, "notes.txt"));
      mkdirSync(join(workspace, "docs"));
      linkSync(join(workspace, ".env"), join(workspace, "docs/settings.txt"));
      writeTree(home, {
        ".pencil/settings.json": JSON.stringify({
          mcpServers: { fs: { command: "node", args: [FS_SERVER, workspace] } },
          permissions: { allow: ["Mcp(fs/*)"] },
        }),
      });
      const read = (path: string) => ({ name: "mcp__fs__read_text_file", arguments: { path: join(workspace, path) } });
      groq.enqueue(
        toolCallReply([
          read("a.txt"),
          read("notes.txt"),
          read("docs/settings.txt"),
          read(".env"),
          { name: "mcp__fs__list_directory", arguments: { path: workspace } },
        ]),
        textReply("done"),
        // Nothing staged: the model is told so once, and answers again.
        textReply("done: nothing to stage"),
      );
      // A real server started in the sandbox: room for a loaded machine.
      const result = await runCli(["agent", "read the files", "-w", workspace], {
        cwd: workspace,
        env,
        timeoutMs: 50_000,
      });
      expect(result.stdout + result.stderr).not.toContain("left out of this run");
      expect(result.code).toBe(0);
      const results = toolResults(groq.requests[1]!.body);
      // The control: the server started and reads the workspace.
      expect(results[0]).toContain("alpha");
      expect(results[4]).toContain("notes.txt");
      const all = results.join("\n");
      expect(all).not.toContain("PRIVATE KEY");
      expect(all).not.toContain("b3BlbnNzaC1rZXktdjEAAAAA");
      expect(all).not.toContain("s3cret-env-value");
    },
    60_000,
  );

  test.skipIf(!hasNamespace)(
    "a directory outside the workspace given to the server: a hard link there to its own .env is masked too",
    async () => {
      const home = realpathSync(tempDir("pencil-owner-"));
      const other = realpathSync(tempDir("pencil-other-"));
      writeTree(other, { "a.txt": "other alpha\n", ".env": "OTHER_TOKEN=other-secret\n" });
      linkSync(join(other, ".env"), join(other, "config.txt"));
      const session = await openMcpSession({
        servers: [{ name: "fs", kind: "stdio", command: "node", args: [FS_SERVER, other], env: {}, origin: "owner" }],
        workspaceRoot: realpathSync(tempDir("pencil-ws-")),
        pencilHome: join(home, ".pencil"),
        home,
        approver: nobodyApprover,
      });
      sessions.push(session);
      const read = (path: string) =>
        session.tools
          .find((t) => t.name === "mcp__fs__read_text_file")!
          .execute({ path }, {} as never)
          .then(String, (error: Error) => `error: ${error.message}`);
      expect(await read(join(other, "a.txt"))).toContain("other alpha");
      for (const name of ["config.txt", ".env"]) expect(await read(join(other, name))).not.toContain("other-secret");
    },
    60_000,
  );

  test.skipIf(!hasNamespace)(
    "a proposal's path arguments are judged and shown by their real path: one leading outside is named so, a private one is never shown",
    async () => {
      const home = realpathSync(tempDir("pencil-owner-"));
      writeTree(home, { ".ssh/id_ed25519": KEY, "Documents/plans.txt": "the owner's plans\n" });
      const ws = realpathSync(tempDir("pencil-ws-"));
      writeTree(ws, { "a.txt": "alpha\n" });
      symlinkSync(join(home, "Documents"), join(ws, "tools"));
      symlinkSync(join(home, ".ssh"), join(ws, "keys"));
      const proposal: McpServerConfig = {
        name: "fs",
        kind: "stdio",
        command: "node",
        args: [FS_SERVER, ws, join(ws, "tools"), join(ws, "keys")],
        env: {},
        origin: "workspace",
      };
      const open = async (answer: "yes" | "no") => {
        const asked: PermissionQuestion[] = [];
        const approver: Approver = {
          async ask(q) {
            asked.push(q);
            return answer === "yes" ? { kind: "yes" } : { kind: "no" };
          },
        };
        const session = await openMcpSession({
          servers: [proposal],
          workspaceRoot: ws,
          pencilHome: join(home, ".pencil"),
          home,
          approver,
        });
        sessions.push(session);
        return { session, asked };
      };
      const refused = await open("no");
      expect(refused.asked).toHaveLength(1);
      const question = refused.asked[0]!.subject;
      expect(question).toContain(
        `${join(ws, "tools")} leads to ${join(home, "Documents")}, which is OUTSIDE the workspace: the server would see it (read-only).`,
      );
      expect(question).toContain(`${join(ws, "keys")} leads to ${join(home, ".ssh")}, which is private (never shown`);
      expect(refused.session.tools).toEqual([]);

      const { session } = await open("yes");
      const call = (tool: string, input: unknown) =>
        session.tools
          .find((t) => t.name === `mcp__fs__${tool}`)!
          .execute(input, {} as never)
          .then(
            (text) => String(text),
            (error: Error) => `error: ${error.message}`,
          );
      expect(await call("read_text_file", { path: join(ws, "a.txt") })).toContain("alpha");
      // Approved with its outside path named: shown, read-only.
      expect(await call("read_text_file", { path: join(ws, "tools/plans.txt") })).toContain("the owner's plans");
      expect(await call("write_file", { path: join(ws, "tools/plans.txt"), content: "x" })).toMatch(/error|read-only/i);
      expect(readFileSync(join(home, "Documents/plans.txt"), "utf8")).toBe("the owner's plans\n");
      // The private one: nothing of it, by either name.
      for (const path of [join(ws, "keys/id_ed25519"), join(home, ".ssh/id_ed25519")])
        expect(await call("read_text_file", { path })).not.toContain("PRIVATE KEY");
    },
    60_000,
  );
});

/**
 * Lays the real filesystem server and its dependency tree out as npm does (hoisted) in `prefix/node_modules`, with its
 * bin linked in `prefix/node_modules/.bin` (and `prefix/bin`, as a global install has it). The files are hard links to
 * this checkout's (whose node_modules files have several names already), not copies: some 4,700 of them, which a copy
 * took seconds of system time to write, twice per run.
 */
function installFsServer(prefix: string): string {
  const from = realpathSync(join(import.meta.dir, "../../../node_modules"));
  for (const dir of programDirs(FS_SERVER, null)) {
    const rel = relative(from, dir);
    if (rel.startsWith("..")) continue;
    linkTree(dir, join(prefix, "node_modules", rel));
  }
  const target = join(prefix, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
  for (const bin of [join(prefix, "node_modules/.bin"), join(prefix, "bin")]) {
    mkdirSync(bin, { recursive: true });
    symlinkSync(relative(bin, target), join(bin, "mcp-server-filesystem"));
  }
  return target;
}

/** `to` made as `from`'s tree: its directories made, its files hard-linked (copied where the two disks differ), its links copied. */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (lstatOrNull(target)) continue; // a nested package laid out already, with the package holding it
    if (entry.isDirectory()) linkTree(source, target);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else
      try {
        linkSync(source, target);
      } catch (error) {
        // Another file system (a temporary directory on tmpfs): no hard link across it.
        if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
        copyFileSync(source, target);
      }
  }
}

function lstatOrNull(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return null; // not there yet
  }
}

describe("MCP servers installed the usual ways start in the sandbox", () => {
  test.skipIf(!hasNamespace)(
    "under a local prefix (hoisted dependencies), as a bin on PATH, and through npx from its cache with the network off: each answers a tool call",
    async () => {
      const ws = realpathSync(tempDir("pencil-ws-"));
      writeTree(ws, { "a.txt": "alpha\n" });
      const home = realpathSync(tempDir("pencil-owner-"));
      const prefix = realpathSync(tempDir("pencil-prefix-"));
      const script = installFsServer(prefix);
      // npx's cache: ~/.npm/_npx/<first 16 hex of sha512 of the package spec>/node_modules, as npx itself lays it out.
      const cache = join(home, ".npm");
      const spec = "@modelcontextprotocol/server-filesystem";
      const installDir = join(cache, "_npx", createHash("sha512").update(spec).digest("hex").slice(0, 16));
      installFsServer(installDir);
      writeFileSync(join(installDir, "package.json"), JSON.stringify({ dependencies: { [spec]: "^2026.8.31" } }));
      const owner = (name: string, command: string, args: string[]): McpServerConfig => ({
        name,
        kind: "stdio",
        command,
        args,
        env: {},
        origin: "owner",
      });
      const session = await openMcpSession({
        servers: [
          owner("local", "node", [script, ws]),
          owner("global", "mcp-server-filesystem", [ws]),
          owner("npx", "npx", ["-y", spec, ws]),
        ],
        workspaceRoot: ws,
        pencilHome: join(home, ".pencil"),
        home,
        env: {
          ...process.env,
          PATH: `${join(prefix, "bin")}:${process.env.PATH}`,
          HOME: home,
          npm_config_cache: cache,
        },
        approver: nobodyApprover,
        network: false,
        // Three real servers starting side by side: room for a loaded machine.
        timeouts: { connectMs: 30_000 },
      });
      sessions.push(session);
      expect(session.notices).toEqual([]);
      for (const name of ["local", "global", "npx"]) {
        const read = session.tools.find((t) => t.name === `mcp__${name}__read_text_file`)!;
        expect(String(await read.execute({ path: join(ws, "a.txt") }, {} as never))).toContain("alpha");
      }
    },
    90_000,
  );

  test.skipIf(!hasNamespace)(
    "npx PKG not in the cache, with the network on: npx fetches it through Pencil's proxy, the registry asked about like any host",
    async () => {
      const registry = await startRegistry();
      const ws = realpathSync(tempDir("pencil-ws-"));
      const home = realpathSync(tempDir("pencil-owner-"));
      const server: McpServerConfig = {
        name: "echo",
        kind: "stdio",
        command: "npx",
        args: ["-y", "pencil-echo-mcp"],
        env: { npm_config_registry: registry.url, npm_config_audit: "false", npm_config_update_notifier: "false" },
        origin: "owner",
      };
      const open = async (approver: Approver) => {
        const session = await openMcpSession({
          servers: [server],
          workspaceRoot: ws,
          pencilHome: join(home, ".pencil"),
          home,
          env: { ...process.env, HOME: home, npm_config_cache: join(home, ".npm") },
          approver,
          network: true,
          startProxy: (options) =>
            startCommandProxy({ ...options, resolveHost: (h) => (h === "registry.test" ? "127.0.0.1" : h) }),
          timeouts: { connectMs: 30_000 },
        });
        sessions.push(session);
        return session;
      };
      const asked: PermissionQuestion[] = [];
      const session = await open({
        async ask(q) {
          asked.push(q);
          return { kind: "always" };
        },
      });
      expect(session.notices).toEqual([]);
      expect(asked.map((q) => q.subject)).toContain(`GET ${registry.url}pencil-echo-mcp`);
      expect(asked.every((q) => q.access === "send")).toBe(true);
      const echo = session.tools.find((t) => t.name === "mcp__echo__echo")!;
      expect(await echo.execute({ text: "hi" }, {} as never)).toBe("npx echo: hi");
      // Nobody to ask and no Net rule: the registry is not reached, and the notice quotes npm.
      const refused = await open(nobodyApprover);
      expect(refused.tools).toEqual([]);
      expect(refused.notices.join("\n")).toMatch(/exited with code \d+; its stderr ended with:[\s\S]*npm error/);
    },
    120_000,
  );

  test("a server that cannot start says why: a missing program file, a command not on PATH", async () => {
    const ws = realpathSync(tempDir("pencil-ws-"));
    const missing = join(tempDir("pencil-gone-"), "dist/index.js");
    const session = await openMcpSession({
      servers: [
        { name: "gone", kind: "stdio", command: "node", args: [missing], env: {}, origin: "owner" },
        { name: "nocmd", kind: "stdio", command: "no-such-mcp-server", args: [], env: {}, origin: "owner" },
      ],
      workspaceRoot: ws,
      pencilHome: tempDir(),
      approver: nobodyApprover,
    });
    sessions.push(session);
    const gone = session.notices.find((n) => n.includes('"gone"'))!;
    expect(gone).toContain("exited with code 1");
    expect(gone).toContain(missing);
    expect(gone).toMatch(/Cannot find module/);
    expect(session.notices.find((n) => n.includes('"nocmd"'))).toContain(
      "its command no-such-mcp-server was not found on PATH",
    );
  }, 60_000);
});

/** A registry on 127.0.0.1 serving the echo fixture package (packed by npm itself), reached as registry.test through the proxy. */
async function startRegistry(): Promise<{ url: string }> {
  const packDir = tempDir("pencil-pack-");
  const packed = spawnSync(
    "npm",
    ["pack", join(import.meta.dir, "../../fixtures/mcp/echo-package"), "--pack-destination", packDir],
    {
      encoding: "utf8",
    },
  );
  expect(packed.status).toBe(0);
  const tarball = readFileSync(join(packDir, "pencil-echo-mcp-1.0.0.tgz"));
  const manifest = JSON.parse(
    readFileSync(join(import.meta.dir, "../../fixtures/mcp/echo-package/package.json"), "utf8"),
  );
  const http = createServer((req, res) => {
    const url = `http://registry.test:${(http.address() as { port: number }).port}/`;
    if (req.url === "/pencil-echo-mcp") {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          name: "pencil-echo-mcp",
          "dist-tags": { latest: "1.0.0" },
          versions: {
            "1.0.0": {
              ...manifest,
              dist: {
                tarball: `${url}pencil-echo-mcp/-/pencil-echo-mcp-1.0.0.tgz`,
                shasum: createHash("sha1").update(tarball).digest("hex"),
                integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
              },
            },
          },
        }),
      );
    } else if (req.url === "/pencil-echo-mcp/-/pencil-echo-mcp-1.0.0.tgz") res.end(tarball);
    else {
      res.statusCode = 404;
      res.end("{}");
    }
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  stops.push(() => new Promise<void>((resolve) => http.close(() => resolve())));
  return { url: `http://registry.test:${(http.address() as { port: number }).port}/` };
}

const sessions: McpSession[] = [];
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.close();
  for (const stop of stops.splice(0)) await stop();
});

describe("fork and hard links", () => {
  test("pencil fork N DIR copies no secret through a hard link to it (the workspace's .env, the owner's key)", async () => {
    const { workspace, home, groq, env } = await modelWorld({ "a.txt": "alpha\n", ".env": "TOKEN=fork-secret\n" });
    writeTree(home, { ".ssh/id_ed25519": KEY });
    linkSync(join(workspace, ".env"), join(workspace, "config.txt"));
    linkSync(join(home, ".ssh/id_ed25519"), join(workspace, "key.txt"));
    groq.enqueue(
      toolCallReply([{ name: "create_file", arguments: { path: "c.txt", content: "gamma\n" } }]),
      textReply("Made c."),
    );
    const cli = (args: string[]) => runCli([...args, "-w", workspace], { cwd: workspace, env, timeoutMs: 50_000 });
    expect((await cli(["agent", "make c"])).code).toBe(3);
    const target = join(tempDir("pencil-fork-"), "try");
    const forked = await cli(["fork", "1", target]);
    expect(forked.code).toBe(0);
    expect(readdirSync(target).sort()).toEqual(["a.txt", "c.txt"]);
    expect(existsSync(join(target, "config.txt"))).toBe(false);
    expect(existsSync(join(target, "key.txt"))).toBe(false);
    expect(forked.stdout).toContain("config.txt");
    expect(forked.stdout).toContain("key.txt");
  }, 60_000);
});
